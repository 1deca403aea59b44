/**
 * The admin's API token flow on each database: making a key (which signs in as its user) needs a
 * recent sign-in, whichever door asks, and a refusal makes none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_CLIENT, addPerson } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { userForApiToken } from '../../tokens/api-tokens.js';
import { createApiTokenByAdmin } from './manage-api-tokens.js';

describe.each(testDatabaseKinds())('the admin’s API token flow on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('makes a key only after a recent sign-in', async () => {
    latchkey = await createTestLatchkey({ kind });
    const root = await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    const ada = await addPerson(latchkey, 'ada');
    const ago = (minutes: number) => new Date(latchkey.clock.now().getTime() - minutes * 60 * 1000);
    for (const when of [ago(6), undefined]) {
      await expect(createApiTokenByAdmin(latchkey.deps, root, 'ada', ADMIN_CLIENT, when)).rejects.toMatchObject({ code: 'reauthentication_required' });
    }
    expect(await latchkey.deps.store.apiTokens.findForUser(ada.id)).toBeUndefined();
    const { key } = await createApiTokenByAdmin(latchkey.deps, root, 'ada', ADMIN_CLIENT, ago(1));
    expect(await userForApiToken(latchkey.deps, key)).toMatchObject({ id: ada.id });
  });
});
