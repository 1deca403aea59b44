import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { NewSocialToken, SocialAccount, SocialApp } from '../../socialaccount/model.js';
import { createUser, expectLatchkeyError, settleAll, useFreshDatabase, type ConformanceTarget } from './harness.js';

const JOINED = new Date('2030-01-01T00:00:00.000Z');
const EXPIRES = new Date('2030-01-01T01:00:00.123Z');
const LATER = new Date('2030-01-01T02:00:00.456Z');

function newSocialToken(accountId: number, appId: number | null, overrides: Partial<NewSocialToken> = {}): NewSocialToken {
  return { accountId, appId, sealedToken: 'v1.access', sealedTokenSecret: 'v1.refresh', expiresAt: EXPIRES, ...overrides };
}

export function describeSocialTokenRepository(target: ConformanceTarget): void {
  const { usernameType } = target;

  describe('SocialTokenRepository', () => {
    const database = useFreshDatabase(target);
    const store = () => database().store;
    const socialTokens = () => database().store.socialTokens;

    async function rowCount(): Promise<number> {
      const { rows } = await sql<{ count: number | string | bigint }>`select count(*) as count from latchkey_social_tokens`.execute(database().kysely);
      return Number(rows[0]?.count);
    }

    /** A user with one social account, and one app in the database. */
    async function setUp(login = 'jane'): Promise<{ account: SocialAccount; app: SocialApp }> {
      const user = await createUser(store(), usernameType, login);
      const account = await store().socialAccounts.create({ userId: user.id, provider: 'acme', uid: login, extraData: {}, dateJoined: JOINED, lastLogin: JOINED });
      const app = await store().socialApps.create({
        provider: 'openid_connect',
        providerId: `acme-${login}`,
        name: 'Acme',
        clientId: 'client',
        sealedSecret: '',
        key: '',
        settings: {},
      });
      return { account, app };
    }

    it('stores a token and lists it for its account, intact', async () => {
      const { account, app } = await setUp();
      const saved = await socialTokens().save(newSocialToken(account.id, app.id));
      expect(typeof saved.id).toBe('number');
      expect(saved).toEqual({ id: saved.id, ...newSocialToken(account.id, app.id) });
      expect(await socialTokens().listForAccount(account.id)).toEqual([saved]);
      expect(await socialTokens().listForAccount(account.id + 1000)).toEqual([]);
    });

    it('keeps one token per app: a null app (an app from the settings) is an app of its own', async () => {
      const { account, app } = await setUp();
      const fromApp = await socialTokens().save(newSocialToken(account.id, app.id));
      const fromSettings = await socialTokens().save(newSocialToken(account.id, null, { sealedToken: 'v1.settings', expiresAt: null }));
      expect(fromSettings).toEqual({ id: fromSettings.id, ...newSocialToken(account.id, null, { sealedToken: 'v1.settings', expiresAt: null }) });
      const listed = await socialTokens().listForAccount(account.id);
      expect(listed).toHaveLength(2);
      expect(listed).toEqual(expect.arrayContaining([fromApp, fromSettings]));
    });

    it('replaces the token of the same account and app, a null app matching a null app', async () => {
      const { account, app } = await setUp();
      for (const appId of [app.id, null]) {
        const first = await socialTokens().save(newSocialToken(account.id, appId));
        const replacement = newSocialToken(account.id, appId, { sealedToken: 'v1.access-2', sealedTokenSecret: 'v1.refresh-2', expiresAt: LATER });
        const second = await socialTokens().save(replacement);
        expect(second).toEqual({ id: first.id, ...replacement });
        const third = await socialTokens().save(newSocialToken(account.id, appId, { sealedToken: 'v1.access-3', expiresAt: null }));
        expect(third).toEqual({ ...second, sealedToken: 'v1.access-3', sealedTokenSecret: 'v1.refresh', expiresAt: null });
      }
      expect(await rowCount()).toBe(2);
    });

    it('keeps the stored refresh token when the new token brings none', async () => {
      const { account } = await setUp();
      await socialTokens().save(newSocialToken(account.id, null, { sealedTokenSecret: 'v1.refresh' }));
      const refreshed = await socialTokens().save(newSocialToken(account.id, null, { sealedToken: 'v1.access-2', sealedTokenSecret: '', expiresAt: LATER }));
      expect(refreshed).toMatchObject({ sealedToken: 'v1.access-2', sealedTokenSecret: 'v1.refresh', expiresAt: LATER });
      expect(await socialTokens().listForAccount(account.id)).toEqual([refreshed]);
    });

    it('stores a first token without a refresh token as having none', async () => {
      const { account } = await setUp();
      const saved = await socialTokens().save(newSocialToken(account.id, null, { sealedTokenSecret: '' }));
      expect(saved.sealedTokenSecret).toBe('');
    });

    it("keeps other accounts' tokens apart", async () => {
      const jane = await setUp('jane');
      const john = await setUp('john');
      const janes = await socialTokens().save(newSocialToken(jane.account.id, null, { sealedToken: 'v1.jane' }));
      const johns = await socialTokens().save(newSocialToken(john.account.id, null, { sealedToken: 'v1.john' }));
      expect(await socialTokens().listForAccount(jane.account.id)).toEqual([janes]);
      expect(await socialTokens().listForAccount(john.account.id)).toEqual([johns]);
    });

    for (const appKind of ['a null app', 'an app'] as const) {
      it(`lets ten parallel saves for one account and ${appKind} leave exactly one token, one of theirs`, async () => {
        const { account, app } = await setUp();
        const appId = appKind === 'an app' ? app.id : null;
        const { values, codes } = await settleAll(
          Array.from({ length: 10 }, (_, index) => socialTokens().save(newSocialToken(account.id, appId, { sealedToken: `v1.access-${index}` }))),
        );
        expect(codes).toEqual([]);
        expect(values).toHaveLength(10);
        const stored = await socialTokens().listForAccount(account.id);
        expect(stored).toHaveLength(1);
        expect(values.map((value) => value.sealedToken)).toContain(stored[0]?.sealedToken);
        expect(new Set(values.map((value) => value.id))).toEqual(new Set([stored[0]?.id]));
      });
    }

    it('refuses a token for an account or an app that does not exist', async () => {
      const { account } = await setUp();
      await expectLatchkeyError(socialTokens().save(newSocialToken(999_999, null)), 'not_found');
      await expectLatchkeyError(socialTokens().save(newSocialToken(account.id, 999_999)), 'not_found');
      expect(await rowCount()).toBe(0);
    });

    it('searches a page of tokens for the admin, newest first, by provider, with whose and which app they are, never their values', async () => {
      const jane = await setUp('jane');
      const john = await setUp('john');
      const johnsGithub = await store().socialAccounts.create({ userId: john.account.userId, provider: 'github', uid: 'john', extraData: {}, dateJoined: JOINED, lastLogin: JOINED });
      const first = await socialTokens().save(newSocialToken(jane.account.id, jane.app.id));
      const second = await socialTokens().save(newSocialToken(john.account.id, null, { sealedTokenSecret: '', expiresAt: null }));
      const third = await socialTokens().save(newSocialToken(johnsGithub.id, null));
      const ids = (listed: { id: number }[]) => listed.map((token) => token.id);
      const search = (query: Partial<Parameters<ReturnType<typeof socialTokens>['search']>[0]> = {}) => socialTokens().search({ limit: 10, ...query });

      const all = await search();
      expect(ids(all)).toEqual([third.id, second.id, first.id]);
      expect(all[2]).toEqual({
        id: first.id,
        accountId: jane.account.id,
        provider: 'acme',
        appId: jane.app.id,
        appName: 'Acme',
        user: { id: jane.account.userId, username: usernameType === 'username' ? 'jane' : null, email: 'jane@example.com' },
        hasAccessToken: true,
        hasRefreshToken: true,
        expiresAt: EXPIRES,
      });
      expect(all[1]).toMatchObject({ appId: null, appName: null, hasAccessToken: true, hasRefreshToken: false, expiresAt: null });
      expect(JSON.stringify(all)).not.toContain('v1.');
      expect(ids(await search({ provider: 'acme' }))).toEqual([second.id, first.id]);
      expect(ids(await search({ provider: 'github' }))).toEqual([third.id]);
      expect(ids(await search({ provider: 'nowhere' }))).toEqual([]);
      expect(ids(await search({ accountId: john.account.id }))).toEqual([second.id]);
      expect(ids(await search({ accountId: 999_999 }))).toEqual([]);
      expect(ids(await search({ limit: 2 }))).toEqual([third.id, second.id]);
      expect(ids(await search({ limit: 2, afterId: second.id }))).toEqual([first.id]);
      // A deleted app leaves its tokens detached: listed with no app.
      await store().socialApps.delete(jane.app.id);
      expect((await search({ provider: 'acme' }))[1]).toMatchObject({ id: first.id, appId: null, appName: null });
    });

    it('saves in a transaction, and a rollback keeps the previous token', async () => {
      const { account } = await setUp();
      const previous = await socialTokens().save(newSocialToken(account.id, null));
      const failure = await store()
        .transaction(async (repositories) => {
          await repositories.socialTokens.save(newSocialToken(account.id, null, { sealedToken: 'v1.new' }));
          throw new Error('changed my mind');
        })
        .catch((reason: unknown) => reason);
      expect((failure as Error).message).toBe('changed my mind');
      expect(await socialTokens().listForAccount(account.id)).toEqual([previous]);
    });
  });
}
