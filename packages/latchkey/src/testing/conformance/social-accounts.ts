import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import { UID_MAX_LENGTH, type NewSocialAccount } from '../../socialaccount/model.js';
import { createUser, expectLatchkeyError, settleAll, useFreshDatabase, type ConformanceTarget } from './harness.js';

const JOINED = new Date('2030-01-01T00:00:00.123Z');
const LOGGED_IN = new Date('2030-02-03T04:05:06.789Z');

function newSocialAccount(userId: number, overrides: Partial<NewSocialAccount> = {}): NewSocialAccount {
  return {
    userId,
    provider: 'acme',
    uid: '10769150350006150715113082367',
    extraData: { userinfo: { sub: '10769150350006150715113082367', email: 'jane@example.com', name: 'Zoë ✓' }, id_token: 'eyJ.x.y' },
    dateJoined: JOINED,
    lastLogin: JOINED,
    ...overrides,
  };
}

export function describeSocialAccountRepository(target: ConformanceTarget): void {
  const { usernameType } = target;

  describe('SocialAccountRepository', () => {
    const database = useFreshDatabase(target);
    const store = () => database().store;
    const socialAccounts = () => database().store.socialAccounts;

    async function tokenCount(): Promise<number> {
      const { rows } = await sql<{ count: number | string | bigint }>`select count(*) as count from latchkey_social_tokens`.execute(database().kysely);
      return Number(rows[0]?.count);
    }

    it('creates an account and finds it by provider and uid and by id, with its data intact', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const created = await socialAccounts().create(newSocialAccount(jane.id));
      expect(typeof created.id).toBe('number');
      expect(created).toEqual({ id: created.id, ...newSocialAccount(jane.id) });
      expect(await socialAccounts().findById(created.id)).toEqual(created);
      expect(await socialAccounts().find('acme', created.uid)).toEqual(created);
      expect(await socialAccounts().findById(created.id + 1000)).toBeUndefined();
      expect(await socialAccounts().find('github', created.uid)).toBeUndefined();
      expect(await socialAccounts().find('acme', `${created.uid}0`)).toBeUndefined();
    });

    it('matches the uid exactly, case included', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const created = await socialAccounts().create(newSocialAccount(jane.id, { uid: 'AbC' }));
      expect(await socialAccounts().find('acme', 'AbC')).toEqual(created);
      expect(await socialAccounts().find('acme', 'abc')).toBeUndefined();
    });

    it(`keeps a uid of exactly ${UID_MAX_LENGTH} characters whole`, async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const uid = 'é'.repeat(UID_MAX_LENGTH - 1) + 'z';
      expect(uid).toHaveLength(UID_MAX_LENGTH);
      const created = await socialAccounts().create(newSocialAccount(jane.id, { uid }));
      expect(created.uid).toBe(uid);
      expect((await socialAccounts().find('acme', uid))?.uid).toBe(uid);
    });

    it("lists a user's accounts oldest first, and no one else's", async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      const later = await socialAccounts().create(newSocialAccount(jane.id, { uid: 'later', dateJoined: new Date('2030-01-02T00:00:00.000Z') }));
      const earlier = await socialAccounts().create(newSocialAccount(jane.id, { provider: 'github', uid: 'earlier' }));
      await socialAccounts().create(newSocialAccount(john.id, { uid: 'john' }));
      expect(await socialAccounts().listForUser(jane.id)).toEqual([earlier, later]);
      expect(await socialAccounts().listForUser(jane.id + 1000)).toEqual([]);
    });

    it('counts the accounts at a provider, and no others', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      expect(await socialAccounts().countForProvider('acme')).toBe(0);
      await socialAccounts().create(newSocialAccount(jane.id, { uid: 'jane-1' }));
      await socialAccounts().create(newSocialAccount(john.id, { uid: 'john-1' }));
      await socialAccounts().create(newSocialAccount(john.id, { provider: 'other', uid: 'john-1' }));
      expect(await socialAccounts().countForProvider('acme')).toBe(2);
      expect(await socialAccounts().countForProvider('other')).toBe(1);
      expect(await socialAccounts().countForProvider('ACME')).toBe(0);
    });

    it('refuses a connected (provider, uid) for its user and for another, but not the uid at another provider', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      const janes = await socialAccounts().create(newSocialAccount(jane.id));
      await expectLatchkeyError(socialAccounts().create(newSocialAccount(jane.id)), 'social_account_exists');
      await expectLatchkeyError(socialAccounts().create(newSocialAccount(john.id, { extraData: {} })), 'social_account_exists');
      expect(await socialAccounts().find('acme', janes.uid)).toEqual(janes);
      expect(await socialAccounts().listForUser(john.id)).toEqual([]);
      const githubs = await socialAccounts().create(newSocialAccount(john.id, { provider: 'github' }));
      expect(await socialAccounts().listForUser(john.id)).toEqual([githubs]);
    });

    it('lets exactly one of ten parallel connects of one (provider, uid), by ten users, succeed', async () => {
      const users = await Promise.all(Array.from({ length: 10 }, (_, index) => createUser(store(), usernameType, `user${index}`)));
      const { values, codes } = await settleAll(users.map((user) => socialAccounts().create(newSocialAccount(user.id))));
      expect(values).toHaveLength(1);
      expect(codes).toEqual(Array.from({ length: 9 }, () => 'social_account_exists'));
      expect(await socialAccounts().find('acme', values[0]!.uid)).toEqual(values[0]);
    });

    it('refuses an account for a user who does not exist', async () => {
      await expectLatchkeyError(socialAccounts().create(newSocialAccount(999_999)), 'not_found');
      expect(await socialAccounts().find('acme', newSocialAccount(999_999).uid)).toBeUndefined();
    });

    it('lets a transaction catch either refusal and go on', async () => {
      // On PostgreSQL a failed statement would abort the transaction; the savepoint around the
      // insert keeps it usable, as on SQLite.
      const jane = await createUser(store(), usernameType, 'jane');
      await socialAccounts().create(newSocialAccount(jane.id));
      const created = await store().transaction(async (repositories) => {
        for (const [input, code] of [
          [newSocialAccount(jane.id), 'social_account_exists'],
          [newSocialAccount(999_999, { uid: 'orphan' }), 'not_found'],
        ] as const) {
          const refusal = await repositories.socialAccounts.create(input).catch((reason: unknown) => reason);
          if (!isLatchkeyError(refusal, code)) throw new Error(`expected '${code}', got ${String(refusal)}`);
        }
        return repositories.socialAccounts.create(newSocialAccount(jane.id, { provider: 'github' }));
      });
      expect(await socialAccounts().findById(created.id)).toEqual(created);
    });

    it("records a login: the provider's latest data and the time, and reports an unknown account", async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const created = await socialAccounts().create(newSocialAccount(jane.id));
      const latest = { userinfo: { sub: created.uid, email: 'jane.doe@example.com' } };
      expect(await socialAccounts().recordLogin(created.id, latest, LOGGED_IN)).toBe(true);
      expect(await socialAccounts().findById(created.id)).toEqual({ ...created, extraData: latest, lastLogin: LOGGED_IN });
      expect(await socialAccounts().recordLogin(created.id + 1000, latest, LOGGED_IN)).toBe(false);
    });

    it('deletes an account once, with its tokens', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const account = await socialAccounts().create(newSocialAccount(jane.id));
      const other = await socialAccounts().create(newSocialAccount(jane.id, { provider: 'github' }));
      await store().socialTokens.save({ accountId: account.id, appId: null, sealedToken: 'v1.access', sealedTokenSecret: '', expiresAt: null });
      const kept = await store().socialTokens.save({ accountId: other.id, appId: null, sealedToken: 'v1.other', sealedTokenSecret: '', expiresAt: null });
      expect(await socialAccounts().delete(account.id)).toBe(true);
      expect(await socialAccounts().delete(account.id)).toBe(false);
      expect(await socialAccounts().findById(account.id)).toBeUndefined();
      expect(await store().socialTokens.listForAccount(account.id)).toEqual([]);
      expect(await store().socialTokens.listForAccount(other.id)).toEqual([kept]);
      expect(await tokenCount()).toBe(1);
      // The (provider, uid) is free again.
      await socialAccounts().create(newSocialAccount(jane.id));
    });

    it("removes a user's accounts and their tokens when the user is deleted", async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      const janes = await socialAccounts().create(newSocialAccount(jane.id));
      const johns = await socialAccounts().create(newSocialAccount(john.id, { uid: 'john' }));
      await store().socialTokens.save({ accountId: janes.id, appId: null, sealedToken: 'v1.jane', sealedTokenSecret: '', expiresAt: null });
      const johnsToken = await store().socialTokens.save({ accountId: johns.id, appId: null, sealedToken: 'v1.john', sealedTokenSecret: '', expiresAt: null });
      expect(await store().users.delete(jane.id)).toBe(true);
      expect(await socialAccounts().listForUser(jane.id)).toEqual([]);
      expect(await socialAccounts().find('acme', janes.uid)).toBeUndefined();
      expect(await store().socialTokens.listForAccount(janes.id)).toEqual([]);
      expect(await socialAccounts().findById(johns.id)).toEqual(johns);
      expect(await store().socialTokens.listForAccount(johns.id)).toEqual([johnsToken]);
      expect(await tokenCount()).toBe(1);
    });

    it('searches a page of accounts for the admin, newest first, by provider and the start of a uid or a login, without their data', async () => {
      const jane = await createUser(store(), usernameType, 'jane', { email: 'jane@example.com' });
      const odd = await createUser(store(), usernameType, 'a_b', { email: 'a_b@example.org' });
      const janeAcme = await socialAccounts().create(newSocialAccount(jane.id, { uid: 'Xy-1' }));
      const janeGithub = await socialAccounts().create(newSocialAccount(jane.id, { provider: 'github', uid: 'g100' }));
      const oddAcme = await socialAccounts().create(newSocialAccount(odd.id, { uid: '100%', lastLogin: LOGGED_IN }));
      const ids = (listed: { id: number }[]) => listed.map((account) => account.id);
      const search = (query: Partial<Parameters<ReturnType<typeof socialAccounts>['search']>[0]> = {}) => socialAccounts().search({ limit: 10, ...query });

      const all = await search();
      expect(ids(all)).toEqual([oddAcme.id, janeGithub.id, janeAcme.id]);
      expect(all[0]).toEqual({
        id: oddAcme.id,
        userId: odd.id,
        provider: 'acme',
        uid: '100%',
        dateJoined: JOINED,
        lastLogin: LOGGED_IN,
        user: { id: odd.id, username: usernameType === 'username' ? 'a_b' : null, email: 'a_b@example.org' },
      });
      expect(all[0]).not.toHaveProperty('extraData');
      expect(ids(await search({ provider: 'acme' }))).toEqual([oddAcme.id, janeAcme.id]);
      expect(ids(await search({ provider: 'ACME' }))).toEqual([]);
      expect(ids(await search({ limit: 2 }))).toEqual([oddAcme.id, janeGithub.id]);
      expect(ids(await search({ limit: 2, afterId: janeGithub.id }))).toEqual([janeAcme.id]);
      // The start of the uid, case included; of the address in any case, or of the username.
      expect(ids(await search({ text: 'Xy' }))).toEqual([janeAcme.id]);
      expect(ids(await search({ text: 'xy' }))).toEqual([]);
      expect(ids(await search({ text: 'g1' }))).toEqual([janeGithub.id]);
      expect(ids(await search({ text: 'JANE@' }))).toEqual([janeGithub.id, janeAcme.id]);
      expect(ids(await search({ text: 'JANE@', provider: 'github' }))).toEqual([janeGithub.id]);
      expect(ids(await search({ text: 'a_' }))).toEqual([oddAcme.id]);
      // LIKE's wildcards are only themselves.
      expect(ids(await search({ text: '100%' }))).toEqual([oddAcme.id]);
      expect(ids(await search({ text: '%' }))).toEqual([]);
      expect(ids(await search({ text: '_' }))).toEqual([]);
    });

    it('reads extra data that is not a JSON object as {}', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const created = await socialAccounts().create(newSocialAccount(jane.id));
      await database().kysely.updateTable('latchkey_social_accounts').set({ extra_data: 'not json' }).where('id', '=', created.id).execute();
      expect(await socialAccounts().findById(created.id)).toEqual({ ...created, extraData: {} });
      await database().kysely.updateTable('latchkey_social_accounts').set({ extra_data: 'null' }).where('id', '=', created.id).execute();
      expect((await socialAccounts().listForUser(jane.id))[0]?.extraData).toEqual({});
    });
  });
}
