/**
 * Disconnecting provider accounts at the same moment: the rule "never the last way in" holds when
 * two disconnects race (two tabs, a double click), on each database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { isLatchkeyError } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { disconnectSocialAccount } from './connections.js';

const CLIENT = { ip: '203.0.113.9', userAgent: 'test' };

describe.each(testDatabaseKinds())('disconnecting provider accounts on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('lets only one of two parallel disconnects through when together they would leave no way in', async () => {
    latchkey = await createTestLatchkey({ kind });
    const user = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: null, emailVerified: true });
    const now = latchkey.clock.now();
    const accounts = await Promise.all(
      ['corp', 'other'].map((provider) => latchkey.deps.store.socialAccounts.create({ userId: user.id, provider, uid: `ada-at-${provider}`, extraData: {}, dateJoined: now, lastLogin: now })),
    );

    const results = await Promise.allSettled(accounts.map((account) => disconnectSocialAccount(latchkey.deps, user, account.id, CLIENT)));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((result) => result.status === 'rejected');
    expect(refused && isLatchkeyError(refused.reason, 'last_login_method')).toBe(true);
    expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toHaveLength(1);
  });
});
