/**
 * Signing in and connecting with an ID token a mobile app got from the provider itself (the
 * headless API's auth/provider/token), for the browser and the app client, on every database,
 * against a real provider (oidc-provider on loopback): a real token signs in, every token issued
 * to someone else or by someone else is refused, MFA follows a social login, a connect needs a
 * recent sign-in and is never of someone else's provider account, and an unknown process is
 * refused. Every JSON response is checked against allauth's published contract by the test client.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { LatchkeyError } from '../../core/errors.js';
import { SocialAccountAdapter, type SocialLoginAttempt } from '../../socialaccount/adapter.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessSocialSite, idTokenFromProvider, startHeadlessCorpProvider, startStrangerProvider, CORP_ACCOUNTS, PASSWORD, STALE_MS } from '../../testing/headless-social.js';
import { activateTotpFor } from '../../testing/mfa.js';
import type { TestOidcProvider } from '../../testing/oidc-provider.js';

const REFUSAL = 'This account may not be used here.';

/** A project's adapter that refuses one person of the provider, as allauth's pre_social_login may. */
class RefusingSocialAdapter extends SocialAccountAdapter {
  override preSocialLogin(attempt: SocialLoginAttempt): Promise<undefined> {
    if (attempt.uid === 'ada-at-corp') return Promise.reject(new LatchkeyError('permission_denied', REFUSAL));
    return Promise.resolve(undefined);
  }
}

let provider: TestOidcProvider;
let stranger: TestOidcProvider;
beforeAll(async () => {
  provider = await startHeadlessCorpProvider(CORP_ACCOUNTS);
  stranger = await startStrangerProvider(CORP_ACCOUNTS);
});
afterAll(async () => {
  await provider.close();
  await stranger.close();
});

describe.each(testDatabaseKinds())('headless token sign-in on %s', (kind) => {
  let site: HeadlessSocialSite;
  afterEach(() => site.close());

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    site = await HeadlessSocialSite.create(kind, provider, settings);
  }

  describe.each(['browser', 'app'] as const)('%s client', (which) => {
    it('signs in with a real ID token from the provider, then the same account again', async () => {
      await setUp();
      const api = site.client(which);
      const first = await site.tokenLogin(api, 'ada-at-corp');
      expect(first.status).toBe(200);
      expect(first.body.data.user).toMatchObject({ email: 'ada@corp.example', display: 'Ada Lovelace' });
      expect(first.body.data.methods).toEqual([expect.objectContaining({ method: 'socialaccount', provider: 'corp', uid: 'ada-at-corp' })]);
      if (which === 'app') expect(first.body.meta.session_token).toEqual(expect.any(String));
      expect((await api.get('/auth/session')).status).toBe(200);

      const again = await site.tokenLogin(api.another(), 'ada-at-corp');
      expect(again.status).toBe(200);
      expect(again.body.data.user.id).toBe(first.body.data.user.id);
      expect(await site.latchkey.deps.store.users.count()).toBe(1);
    });

    it('refuses a token issued to another client, by another issuer, for another party, or malformed', async () => {
      await setUp();
      const api = site.client(which);
      const refusedAs = async (body: unknown, code: string, param = 'token') => {
        const response = await api.post('/auth/provider/token', body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(response.body.errors).toEqual([expect.objectContaining({ code, param })]);
      };
      const forged = (claims: Record<string, unknown>) => provider.signIdToken({ clientId: 'mobile', sub: 'ada-at-corp', claims });
      const token = (id_token: string, client_id = 'mobile') => ({ provider: 'corp', process: 'login', token: { client_id, id_token } });

      await refusedAs(token(await forged({ aud: 'someone-else' })), 'invalid_token');
      await refusedAs(token(await forged({ iss: 'https://id.evil.example' })), 'invalid_token');
      await refusedAs(token(await idTokenFromProvider(stranger, 'ada-at-corp')), 'invalid_token');
      await refusedAs(token(await forged({ aud: ['mobile', 'other-app'], azp: 'other-app' })), 'invalid_token');
      // The real token, presented as the web app's: its audience is the mobile app.
      await refusedAs(token(await idTokenFromProvider(provider, 'ada-at-corp'), 'latchkey'), 'invalid_token');
      await refusedAs(token('not.a.jwt'), 'invalid_token');
      await refusedAs(token(await forged({}), 'unknown-client'), 'invalid_token');
      await refusedAs({ provider: 'nobody', process: 'login', token: { client_id: 'mobile', id_token: await forged({}) } }, 'unknown_provider', 'provider');
      await refusedAs({ provider: 'corp', process: 'login', token: { id_token: await forged({}) } }, 'client_id_required');
      await refusedAs({ provider: 'corp', process: 'login', token: { client_id: 'mobile', access_token: 'an access token' } }, 'token_required');
      await refusedAs({ provider: 'corp', process: 'login', token: 'eyJ' }, 'invalid_token');
      await refusedAs({ provider: 'corp', process: 'login', token: ['mobile'] }, 'invalid_token');
      expect(await site.latchkey.deps.store.users.count()).toBe(0);
      expect((await api.get('/auth/session')).status).toBe(401);
      // A well-formed token of the right party still works afterwards.
      expect((await api.post('/auth/provider/token', token(await forged({ aud: ['mobile', 'other-app'], azp: 'mobile' })))).status).toBe(200);
    });

    it("reads a token's expiry on the site's clock: good when issued, refused once the clock has passed it", async () => {
      await setUp();
      const idToken = await idTokenFromProvider(provider, 'ada-at-corp');
      const body = { provider: 'corp', process: 'login', token: { client_id: 'mobile', id_token: idToken } };
      expect((await site.client(which).post('/auth/provider/token', body)).status).toBe(200);
      // The provider issues ID tokens for ten minutes (testing/oidc-provider.ts); the site's clock moves past that.
      site.latchkey.clock.advance(11 * 60 * 1000);
      const late = site.client(which);
      const refused = await late.post('/auth/provider/token', body);
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([expect.objectContaining({ code: 'invalid_token', param: 'token' })]);
      expect((await late.get('/auth/session')).status).toBe(401);
    });

    it("answers the project's preSocialLogin refusal with its message and code, recording nobody", async () => {
      site = await HeadlessSocialSite.create(kind, provider, {}, (settings) => new RefusingSocialAdapter(settings));
      const api = site.client(which);
      const refused = await site.tokenLogin(api, 'ada-at-corp');
      expect(refused.status).toBe(403);
      expect(refused.body.errors).toEqual([expect.objectContaining({ message: REFUSAL, code: 'permission_denied' })]);
      expect(await site.latchkey.deps.store.users.count()).toBe(0);
      expect((await api.get('/auth/session')).status).toBe(401);
      // Another person of the same provider is let through.
      expect((await site.tokenLogin(api, 'grace-at-corp')).status).toBe(200);
    });

    it('refuses an unknown process, as the redirect does, signing nobody in', async () => {
      await setUp();
      const api = site.client(which);
      const idToken = await idTokenFromProvider(provider, 'ada-at-corp');
      for (const process of ['steal', 'Connect', 'redirect']) {
        const refused = await api.post('/auth/provider/token', { provider: 'corp', process, token: { client_id: 'mobile', id_token: idToken } });
        expect(refused.status, process).toBe(400);
        expect(refused.body.errors).toEqual([{ message: 'Select a valid choice.', code: 'invalid_choice', param: 'process' }]);
      }
      expect(await site.latchkey.deps.store.users.count()).toBe(0);
    });

    it('counts token logins against the login rate limit, answering 429 past it', async () => {
      await setUp({ ACCOUNT_RATE_LIMITS: { login: '2/m/ip' } });
      const api = site.client(which);
      expect((await site.tokenLogin(api, 'ada-at-corp')).status).toBe(200);
      expect((await site.tokenLogin(api.another(), 'ada-at-corp')).status).toBe(200);
      expect((await site.tokenLogin(api.another(), 'ada-at-corp')).status).toBe(429);
    });

    it('asks for the code after a social login of a user with an authenticator app', async () => {
      await setUp();
      const api = site.client(which);
      expect((await site.tokenLogin(api, 'ada-at-corp')).status).toBe(200);
      const ada = (await site.latchkey.deps.store.users.findByEmail('ada@corp.example'))!;
      const totp = await activateTotpFor(site.latchkey, ada);

      const again = api.another();
      const stopped = await site.tokenLogin(again, 'ada-at-corp');
      expect(stopped.status).toBe(401);
      expect(stopped.body.data.flows).toContainEqual({ id: 'mfa_authenticate', is_pending: true, types: ['totp', 'recovery_codes'] });
      expect(stopped.body.meta.is_authenticated).toBe(false);
      const done = await again.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(done.status).toBe(200);
      expect((done.body.data.methods as { method: string }[]).map((method) => method.method)).toEqual(['socialaccount', 'mfa']);
    });

    it('connects with a token for the signed-in user, never someone else’s provider account', async () => {
      await setUp();
      await createUser(site.latchkey.deps, { username: 'gracie', email: 'grace@home.example', password: PASSWORD, emailVerified: true });
      const api = site.client(which);
      const connectBody = async (sub: string) => ({ provider: 'corp', process: 'connect', token: { client_id: 'mobile', id_token: await idTokenFromProvider(provider, sub) } });
      expect((await api.post('/auth/provider/token', await connectBody('grace-at-corp'))).status).toBe(401);
      expect((await api.post('/auth/login', { username: 'gracie', password: PASSWORD })).status).toBe(200);
      const connected = await api.post('/auth/provider/token', await connectBody('grace-at-corp'));
      expect(connected.status).toBe(200);
      expect((await api.get('/account/providers')).body.data).toEqual([expect.objectContaining({ uid: 'grace-at-corp' })]);

      // Ada's provider account belongs to Ada.
      expect((await site.tokenLogin(site.client(which), 'ada-at-corp')).status).toBe(200);
      const theirs = await api.post('/auth/provider/token', await connectBody('ada-at-corp'));
      expect(theirs.status).toBe(400);
      expect(theirs.body.errors?.[0]?.code).toBe('connected_other');
    });

    it('asks a stale sign-in to reauthenticate before a token connect, and connects nothing until it has', async () => {
      await setUp();
      const grace = await createUser(site.latchkey.deps, { username: 'gracie', email: 'grace@home.example', password: PASSWORD, emailVerified: true });
      const api = site.client(which);
      expect((await api.post('/auth/login', { username: 'gracie', password: PASSWORD })).status).toBe(200);
      site.latchkey.clock.advance(STALE_MS);
      const body = { provider: 'corp', process: 'connect', token: { client_id: 'mobile', id_token: await idTokenFromProvider(provider, 'grace-at-corp') } };
      const stale = await api.post('/auth/provider/token', body);
      // allauth's reauthentication shape: still signed in, the ways to prove it again listed.
      expect(stale.status).toBe(401);
      expect(stale.body.meta.is_authenticated).toBe(true);
      expect(stale.body.data.user).toMatchObject({ id: grace.id });
      expect(stale.body.data.flows).toContainEqual({ id: 'reauthenticate' });
      expect(await site.latchkey.deps.store.socialAccounts.listForUser(grace.id)).toEqual([]);

      expect((await api.post('/auth/reauthenticate', { password: PASSWORD })).status).toBe(200);
      expect((await api.post('/auth/provider/token', body)).status).toBe(200);
      expect(await site.latchkey.deps.store.socialAccounts.listForUser(grace.id)).toMatchObject([{ uid: 'grace-at-corp' }]);
    });
  });
});
