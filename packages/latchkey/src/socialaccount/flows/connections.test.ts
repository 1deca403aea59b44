/**
 * Disconnecting provider accounts: the rule "never the last way in" holds when two disconnects
 * race (two tabs, a double click), and nothing is removed without a recent proof of identity, on
 * each database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { REAUTHENTICATION_WINDOW_SECONDS } from '../../account/flows/reauthenticate.js';
import { createUser } from '../../account/users.js';
import { isLatchkeyError } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { disconnectSocialAccount } from './connections.js';

const CLIENT = { ip: '203.0.113.9', userAgent: 'test' };

describe.each(testDatabaseKinds())('disconnecting provider accounts on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function userWithAccounts(password: string | null, providers: string[]) {
    latchkey = await createTestLatchkey({ kind });
    const user = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password, emailVerified: true });
    const now = latchkey.clock.now();
    const accounts = await Promise.all(
      providers.map((provider) => latchkey.deps.store.socialAccounts.create({ userId: user.id, provider, uid: `ada-at-${provider}`, extraData: {}, dateJoined: now, lastLogin: now })),
    );
    return { user, accounts };
  }

  it('lets only one of two parallel disconnects through when together they would leave no way in', async () => {
    const { user, accounts } = await userWithAccounts(null, ['corp', 'other']);
    const requester = { user, lastAuthenticatedAt: latchkey.clock.now() };

    const results = await Promise.allSettled(accounts.map((account) => disconnectSocialAccount(latchkey.deps, requester, account.id, CLIENT)));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((result) => result.status === 'rejected');
    expect(refused && isLatchkeyError(refused.reason, 'last_login_method')).toBe(true);
    expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toHaveLength(1);
  });

  it('asks for a recent proof of identity before anything else, and removes nothing without one', async () => {
    const { user, accounts } = await userWithAccounts('a long enough passphrase', ['corp']);
    const signedInAt = latchkey.clock.now();
    latchkey.clock.advance((REAUTHENTICATION_WINDOW_SECONDS + 1) * 1000);

    for (const [lastAuthenticatedAt, accountId] of [[signedInAt, accounts[0]!.id], [undefined, accounts[0]!.id], [signedInAt, 999_999]] as const) {
      const refusal = await disconnectSocialAccount(latchkey.deps, { user, lastAuthenticatedAt }, accountId, CLIENT).then(() => undefined, (error: unknown) => error);
      expect(isLatchkeyError(refusal, 'reauthentication_required'), String(accountId)).toBe(true);
    }
    expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toHaveLength(1);
    await latchkey.deps.background.idle();
    expect(latchkey.mailer.outbox).toEqual([]);

    // Within the window it goes through.
    await disconnectSocialAccount(latchkey.deps, { user, lastAuthenticatedAt: latchkey.clock.now() }, accounts[0]!.id, CLIENT);
    expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toEqual([]);
  });
});
