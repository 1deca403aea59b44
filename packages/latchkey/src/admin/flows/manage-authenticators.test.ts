/**
 * The admin's authenticator flow on each database: removing a second factor weakens how its user
 * signs in, so it needs a recent sign-in, whichever door asks, and a refusal removes nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_CLIENT, addPerson } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { removeAuthenticatorByAdmin } from './manage-authenticators.js';

describe.each(testDatabaseKinds())('the admin’s authenticator flow on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('removes an authenticator only after a recent sign-in', async () => {
    latchkey = await createTestLatchkey({ kind });
    const root = await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    const ada = await addPerson(latchkey, 'ada');
    await activateTotpFor(latchkey, ada);
    const [totp] = await latchkey.deps.store.authenticators.listForUser(ada.id);
    const ago = (minutes: number) => new Date(latchkey.clock.now().getTime() - minutes * 60 * 1000);
    const mails = latchkey.mailer.outbox.length;
    for (const when of [ago(6), undefined]) {
      await expect(removeAuthenticatorByAdmin(latchkey.deps, root, totp!.id, ADMIN_CLIENT, when)).rejects.toMatchObject({ code: 'reauthentication_required' });
    }
    expect(await latchkey.deps.store.authenticators.findById(totp!.id)).toBeDefined();
    expect(latchkey.mailer.outbox).toHaveLength(mails);
    await removeAuthenticatorByAdmin(latchkey.deps, root, totp!.id, ADMIN_CLIENT, ago(1));
    expect(await latchkey.deps.store.authenticators.findById(totp!.id)).toBeUndefined();
  });
});
