/**
 * The admin's social account flow on each database: unlinking an account at a provider may take
 * away its user's way in, so it needs a recent sign-in, whichever door asks, and a refusal
 * removes nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_CLIENT, addPerson } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { removeSocialAccountByAdmin } from './manage-social-accounts.js';

describe.each(testDatabaseKinds())('the admin’s social account flow on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('removes a social account only after a recent sign-in', async () => {
    latchkey = await createTestLatchkey({ kind });
    const root = await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    const ada = await addPerson(latchkey, 'ada');
    const now = latchkey.clock.now();
    const account = await latchkey.deps.store.socialAccounts.create({ userId: ada.id, provider: 'corp', uid: 'ada-at-corp', extraData: {}, dateJoined: now, lastLogin: now });
    const ago = (minutes: number) => new Date(now.getTime() - minutes * 60 * 1000);
    const mails = latchkey.mailer.outbox.length;
    for (const when of [ago(6), undefined]) {
      await expect(removeSocialAccountByAdmin(latchkey.deps, root, account.id, ADMIN_CLIENT, when)).rejects.toMatchObject({ code: 'reauthentication_required' });
    }
    expect(await latchkey.deps.store.socialAccounts.findById(account.id)).toBeDefined();
    expect(latchkey.mailer.outbox).toHaveLength(mails);
    await removeSocialAccountByAdmin(latchkey.deps, root, account.id, ADMIN_CLIENT, ago(1));
    expect(await latchkey.deps.store.socialAccounts.findById(account.id)).toBeUndefined();
  });
});
