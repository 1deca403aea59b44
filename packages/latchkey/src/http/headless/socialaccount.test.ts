/**
 * Signing in with an OpenID Connect provider through the headless API, against a real provider
 * (oidc-provider on loopback), on every database: the browser's redirect round trip back to the
 * front end, a mobile app's ID token, the provider's signup form, MFA after a social login,
 * connected accounts, and what must be refused (an open redirect through callback_url, tokens
 * issued to someone else or by someone else, closed signup, the last way in). Every JSON response
 * is checked against allauth's published contract by the test client.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Ajv } from 'ajv';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { startTestOidcProvider, type TestOidcProvider } from '../../testing/oidc-provider.js';
import { headlessOpenApiDocument } from './openapi.js';

const PASSWORD = 'a long enough passphrase';
const CALLBACK = 'http://testserver/accounts/oidc/corp/login/callback/';
const MOBILE_REDIRECT = 'http://mobile.example/callback';
const FRONT_END = 'https://app.example.com';
const FRONT_END_CALLBACK = `${FRONT_END}/account/provider/callback`;
/** Past the five minutes within which a sign-in counts as a recent proof of identity. */
const STALE_MS = 301 * 1000;

const ACCOUNTS = [
  { sub: 'ada-at-corp', claims: { email: 'ada@corp.example', email_verified: true, name: 'Ada Lovelace', preferred_username: 'ada' } },
  { sub: 'grace-at-corp', claims: { email: 'grace@example.com', email_verified: true, name: 'Grace Hopper', preferred_username: 'grace' } },
];

let provider: TestOidcProvider;
/** Another identity provider altogether: its tokens name another issuer and are signed with another key. */
let stranger: TestOidcProvider;
beforeAll(async () => {
  provider = await startTestOidcProvider({
    clients: [
      { client_id: 'latchkey', client_secret: 'provider-secret', redirect_uris: [CALLBACK] },
      { client_id: 'mobile', client_secret: 'mobile-secret', redirect_uris: [MOBILE_REDIRECT] },
    ],
    accounts: ACCOUNTS,
  });
  stranger = await startTestOidcProvider({ clients: [{ client_id: 'mobile', client_secret: 'mobile-secret', redirect_uris: [MOBILE_REDIRECT] }], accounts: ACCOUNTS });
});
afterAll(async () => {
  await provider.close();
  await stranger.close();
});

/**
 * A mobile app's own sign-in at the provider, to its ID token: the authorization code flow with
 * PKCE as client `mobile`, the code exchanged at the provider's token endpoint. A real token, as
 * the provider issues them.
 */
async function idTokenFromProvider(sub: string, at: TestOidcProvider = provider): Promise<string> {
  const discovery = (await (await fetch(`${at.issuer}/.well-known/openid-configuration`)).json()) as { authorization_endpoint: string; token_endpoint: string };
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(discovery.authorization_endpoint);
  authorize.search = new URLSearchParams({
    client_id: 'mobile',
    redirect_uri: MOBILE_REDIRECT,
    response_type: 'code',
    scope: 'openid email profile',
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const back = await at.followAuthorization(authorize, { as: { login: sub } });
  const response = await fetch(discovery.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('mobile:mobile-secret').toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', redirect_uri: MOBILE_REDIRECT, code_verifier: verifier }),
  });
  const tokens = (await response.json()) as { id_token?: string };
  expect(tokens.id_token).toBeDefined();
  return tokens.id_token!;
}

describe.each(testDatabaseKinds())('headless social sign-in on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  /** Corp's web app (the redirect) and its mobile app (hidden: token logins only), same provider_id. */
  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    const server = { server_url: provider.issuer };
    const apps = [
      { provider_id: 'corp', name: 'Corp SSO', client_id: 'latchkey', secret: 'provider-secret', settings: server },
      { provider_id: 'corp', name: 'Corp SSO', client_id: 'mobile', settings: { ...server, hidden: true } },
    ];
    latchkey = await createTestLatchkey({
      kind,
      settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', CORS_ALLOWED_ORIGINS: [FRONT_END], SOCIALACCOUNT_PROVIDERS: { openid_connect: { APPS: apps } }, ...settings },
    });
    app = await HeadlessTestClient.createApp(latchkey);
  }

  const client = (which: 'browser' | 'app') => new HeadlessTestClient(app, which, latchkey);

  /** The browser following a redirect to this site (the provider's callback), keeping the cookies it is given. */
  async function visit(browser: HeadlessTestClient, url: URL | string): Promise<LightMyRequestResponse> {
    const target = new URL(url, 'http://testserver');
    expect(target.origin).toBe('http://testserver');
    const response = await app.inject({ method: 'GET', url: target.pathname + target.search, headers: { host: 'testserver' }, cookies: Object.fromEntries(browser.cookies) });
    await latchkey.deps.background.idle();
    for (const cookie of response.cookies) {
      if (cookie.value === '' || (cookie.maxAge !== undefined && cookie.maxAge <= 0)) browser.cookies.delete(cookie.name);
      else browser.cookies.set(cookie.name, cookie.value);
    }
    return response;
  }

  /** The front end's form post, the provider's sign-in (as `login`), and its callback: where the browser ends up. */
  async function redirectSignIn(browser: HeadlessTestClient, login: string, form: Record<string, string> = {}): Promise<string> {
    const started = await browser.post('/auth/provider/redirect', undefined, { form: { provider: 'corp', callback_url: FRONT_END_CALLBACK, process: 'login', ...form } });
    expect(started.status).toBe(302);
    expect(started.headers.location).toMatch(new RegExp(`^${provider.issuer}/`));
    const callback = await provider.followAuthorization(started.headers.location as string, { as: { login } });
    const returned = await visit(browser, callback);
    expect(returned.statusCode).toBe(302);
    return returned.headers.location as string;
  }

  const tokenLogin = async (api: HeadlessTestClient, sub: string) =>
    api.post('/auth/provider/token', { provider: 'corp', process: 'login', token: { client_id: 'mobile', id_token: await idTokenFromProvider(sub) } });

  const CORP = { id: 'corp', name: 'Corp SSO', client_id: 'latchkey', flows: ['provider_redirect', 'provider_token'] };

  it('advertises the provider in config and in the flows, the redirect to browsers only', async () => {
    await setUp();
    const corp = { ...CORP, openid_configuration_url: `${provider.issuer}/.well-known/openid-configuration` };
    const browser = client('browser');
    expect((await browser.get('/config')).body.data.socialaccount).toEqual({ providers: [corp] });
    const flows = (await browser.get('/auth/session')).body.data.flows;
    expect(flows).toContainEqual({ id: 'provider_redirect', providers: ['corp'] });
    expect(flows).toContainEqual({ id: 'provider_token', providers: ['corp'] });

    const phone = client('app');
    expect((await phone.get('/config')).body.data.socialaccount).toEqual({ providers: [corp] });
    const appFlows = (await phone.get('/auth/session')).body.data.flows as { id: string }[];
    expect(appFlows).toContainEqual({ id: 'provider_token', providers: ['corp'] });
    expect(appFlows.map((flow) => flow.id)).not.toContain('provider_redirect');
  });

  it('signs a new person up through the redirect and returns the browser to callback_url, signed in', async () => {
    await setUp();
    const browser = client('browser');
    expect(await redirectSignIn(browser, 'ada-at-corp')).toBe(FRONT_END_CALLBACK);
    const session = await browser.get('/auth/session');
    expect(session.status).toBe(200);
    expect(session.body.data.user).toMatchObject({ email: 'ada@corp.example', username: 'ada', display: 'Ada Lovelace', has_usable_password: false });
    expect(session.body.data.methods).toEqual([{ method: 'socialaccount', at: latchkey.clock.now().getTime() / 1000, provider: 'corp', uid: 'ada-at-corp', reauthenticated: false }]);
    expect((await browser.get('/account/providers')).body.data).toEqual([{ uid: 'ada-at-corp', display: 'Ada Lovelace', provider: expect.objectContaining({ id: 'corp', name: 'Corp SSO' }) }]);
  });

  it('connects a provider account to the signed-in user through the redirect, only after a recent sign-in', async () => {
    await setUp();
    const grace = await createUser(latchkey.deps, { username: 'gracie', email: 'grace@home.example', password: PASSWORD, emailVerified: true });
    const anonymous = client('browser');
    expect(await redirectSignInStart(anonymous, { process: 'connect' })).toBe(`${FRONT_END_CALLBACK}?error=permission_denied&error_process=connect`);

    const browser = client('browser');
    expect((await browser.post('/auth/login', { username: 'gracie', password: PASSWORD })).status).toBe(200);
    expect(await redirectSignIn(browser, 'grace-at-corp', { process: 'connect' })).toBe(FRONT_END_CALLBACK);
    expect((await browser.get('/account/providers')).body.data).toEqual([{ uid: 'grace-at-corp', display: 'Grace Hopper', provider: expect.objectContaining({ id: 'corp' }) }]);
    expect((await browser.get('/auth/session')).body.data.user).toMatchObject({ id: grace.id });

    latchkey.clock.advance(STALE_MS);
    expect(await redirectSignInStart(browser, { process: 'connect' })).toBe(`${FRONT_END_CALLBACK}?error=reauthentication_required&error_process=connect`);
  });

  /** A form post that does not reach the provider: where it sends the browser instead. */
  async function redirectSignInStart(browser: HeadlessTestClient, form: Record<string, string>): Promise<string | undefined> {
    const response = await browser.post('/auth/provider/redirect', undefined, { form: { provider: 'corp', callback_url: FRONT_END_CALLBACK, process: 'login', ...form } });
    expect(response.status).toBe(302);
    return response.headers.location;
  }

  it('refuses to make callback_url an open redirect, and sends bad input back to a safe callback_url', async () => {
    await setUp();
    const browser = client('browser');
    for (const callback_url of ['https://evil.example/steal', '//evil.example/', 'https://app.example.com.evil.example/', 'https://app.example.com@evil.example/', 'javascript:alert(1)', '']) {
      const refused = await browser.post('/auth/provider/redirect', undefined, { form: { provider: 'corp', callback_url, process: 'login' } });
      expect(refused.status, callback_url).toBe(400);
      expect(refused.headers.location).toBeUndefined();
      expect(refused.body.errors).toEqual([{ message: 'Invalid URL.', code: 'invalid_url', param: 'callback_url' }]);
    }
    // A path on this site is a front end of its own.
    expect((await browser.post('/auth/provider/redirect', undefined, { form: { provider: 'corp', callback_url: '/spa/callback', process: 'login' } })).headers.location).toMatch(new RegExp(`^${provider.issuer}/`));
    expect(await redirectSignInStart(browser, { provider: 'nobody' })).toBe(`${FRONT_END_CALLBACK}?error=unknown&error_process=login`);
    expect(await redirectSignInStart(browser, { process: 'steal' })).toBe(`${FRONT_END_CALLBACK}?error=unknown&error_process=login`);
    // A real form carries the CSRF token: without it nothing starts.
    const forged = await browser.post('/auth/provider/redirect', undefined, { csrf: false, form: { provider: 'corp', callback_url: FRONT_END_CALLBACK, process: 'login' } });
    expect(forged.status).toBe(403);
    expect(forged.headers.location).toBeUndefined();
  });

  it('sends a refused callback_url to the front end’s error route when it has one', async () => {
    await setUp({ HEADLESS_FRONTEND_URLS: { socialaccount_login_error: `${FRONT_END}/login/error` } });
    const refused = await client('browser').post('/auth/provider/redirect', undefined, { form: { provider: 'corp', callback_url: 'https://evil.example/', process: 'connect' } });
    expect(refused.status).toBe(302);
    expect(refused.headers.location).toBe(`${FRONT_END}/login/error?error=invalid_url&error_process=connect`);
  });

  it('with signup closed: 403 for a token, ?error=signup_closed after the redirect, nobody signed up', async () => {
    await setUp({ ACCOUNT_ALLOW_REGISTRATION: false });
    const browser = client('browser');
    expect(await redirectSignIn(browser, 'ada-at-corp')).toBe(`${FRONT_END_CALLBACK}?error=signup_closed&error_process=login`);
    expect((await browser.get('/auth/session')).status).toBe(401);
    const phone = client('app');
    const refused = await tokenLogin(phone, 'ada-at-corp');
    expect(refused.status).toBe(403);
    expect(refused.body.errors?.[0]?.code).toBe('signup_closed');
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });

  describe.each(['browser', 'app'] as const)('%s client', (which) => {
    it('signs in with a real ID token from the provider, then the same account again', async () => {
      await setUp();
      const api = client(which);
      const first = await tokenLogin(api, 'ada-at-corp');
      expect(first.status).toBe(200);
      expect(first.body.data.user).toMatchObject({ email: 'ada@corp.example', display: 'Ada Lovelace' });
      expect(first.body.data.methods).toEqual([expect.objectContaining({ method: 'socialaccount', provider: 'corp', uid: 'ada-at-corp' })]);
      if (which === 'app') expect(first.body.meta.session_token).toEqual(expect.any(String));
      expect((await api.get('/auth/session')).status).toBe(200);

      const again = await tokenLogin(api.another(), 'ada-at-corp');
      expect(again.status).toBe(200);
      expect(again.body.data.user.id).toBe(first.body.data.user.id);
      expect(await latchkey.deps.store.users.count()).toBe(1);
    });

    it('refuses a token issued to another client, by another issuer, for another party, expired, or malformed', async () => {
      await setUp();
      const api = client(which);
      const refusedAs = async (body: unknown, code: string, param = 'token') => {
        const response = await api.post('/auth/provider/token', body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(response.body.errors).toEqual([expect.objectContaining({ code, param })]);
      };
      const now = Math.floor(Date.now() / 1000);
      const forged = (claims: Record<string, unknown>) => provider.signIdToken({ clientId: 'mobile', sub: 'ada-at-corp', claims });
      const token = (id_token: string, client_id = 'mobile') => ({ provider: 'corp', process: 'login', token: { client_id, id_token } });

      await refusedAs(token(await forged({ aud: 'someone-else' })), 'invalid_token');
      await refusedAs(token(await forged({ iss: 'https://id.evil.example' })), 'invalid_token');
      await refusedAs(token(await idTokenFromProvider('ada-at-corp', stranger)), 'invalid_token');
      await refusedAs(token(await forged({ aud: ['mobile', 'other-app'], azp: 'other-app' })), 'invalid_token');
      await refusedAs(token(await forged({ iat: now - 1200, exp: now - 600 })), 'invalid_token');
      // The real token, presented as the web app's: its audience is the mobile app.
      await refusedAs(token(await idTokenFromProvider('ada-at-corp'), 'latchkey'), 'invalid_token');
      await refusedAs(token('not.a.jwt'), 'invalid_token');
      await refusedAs(token(await forged({}), 'unknown-client'), 'invalid_token');
      await refusedAs({ provider: 'nobody', process: 'login', token: { client_id: 'mobile', id_token: await forged({}) } }, 'unknown_provider', 'provider');
      await refusedAs({ provider: 'corp', process: 'login', token: { id_token: await forged({}) } }, 'client_id_required');
      await refusedAs({ provider: 'corp', process: 'login', token: { client_id: 'mobile', access_token: 'an access token' } }, 'token_required');
      await refusedAs({ provider: 'corp', process: 'login', token: 'eyJ' }, 'invalid_token');
      await refusedAs({ provider: 'corp', process: 'login', token: ['mobile'] }, 'invalid_token');
      expect(await latchkey.deps.store.users.count()).toBe(0);
      expect((await api.get('/auth/session')).status).toBe(401);
      // A well-formed token of the right party still works afterwards.
      expect((await api.post('/auth/provider/token', token(await forged({ aud: ['mobile', 'other-app'], azp: 'mobile' })))).status).toBe(200);
    });

    it('counts token logins against the login rate limit, answering 429 past it', async () => {
      await setUp({ ACCOUNT_RATE_LIMITS: { login: '2/m/ip' } });
      const api = client(which);
      expect((await tokenLogin(api, 'ada-at-corp')).status).toBe(200);
      expect((await tokenLogin(api.another(), 'ada-at-corp')).status).toBe(200);
      const limited = await tokenLogin(api.another(), 'ada-at-corp');
      expect(limited.status).toBe(429);
    });

    it('asks for the code after a social login of a user with an authenticator app', async () => {
      await setUp();
      const api = client(which);
      expect((await tokenLogin(api, 'ada-at-corp')).status).toBe(200);
      const ada = (await latchkey.deps.store.users.findByEmail('ada@corp.example'))!;
      const totp = await activateTotpFor(latchkey, ada);

      const again = api.another();
      const stopped = await tokenLogin(again, 'ada-at-corp');
      expect(stopped.status).toBe(401);
      expect(stopped.body.data.flows).toContainEqual({ id: 'mfa_authenticate', is_pending: true, types: ['totp', 'recovery_codes'] });
      expect(stopped.body.meta.is_authenticated).toBe(false);
      const done = await again.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(done.status).toBe(200);
      expect((done.body.data.methods as { method: string }[]).map((method) => method.method)).toEqual(['socialaccount', 'mfa']);
    });

    it('keeps a signup the provider could not finish for the signup form: GET shows it, POST completes it', async () => {
      await setUp();
      // Grace's address at the provider already has an account here: no automatic signup, and never a link.
      await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
      const api = client(which);
      expect((await api.get('/auth/provider/signup')).status).toBe(409);
      const pending = await tokenLogin(api, 'grace-at-corp');
      expect(pending.status).toBe(401);
      const signupFlow = { id: 'provider_signup', is_pending: true, provider: expect.objectContaining({ id: 'corp', name: 'Corp SSO', flows: ['provider_redirect', 'provider_token'] }) };
      expect(pending.body.data.flows).toContainEqual(signupFlow);
      expect((await api.get('/auth/session')).body.data.flows).toContainEqual(signupFlow);

      const form = await api.get('/auth/provider/signup');
      expect(form.status).toBe(200);
      expect(form.body.data).toEqual({
        email: [{ email: 'grace@example.com', primary: true, verified: true }],
        account: { uid: 'grace-at-corp', display: 'Grace Hopper', provider: expect.objectContaining({ id: 'corp' }) },
        user: { display: 'Grace Hopper', has_usable_password: false, email: 'grace@example.com', username: 'grace' },
      });

      const taken = await api.post('/auth/provider/signup', { email: 'grace@example.com', username: 'gracehopper' });
      expect(taken.status).toBe(400);
      expect(taken.body.errors).toEqual([{ message: expect.stringContaining('An account already exists with this email address.'), code: 'email_taken', param: 'email' }]);
      const invalid = await api.post('/auth/provider/signup', { email: 'not an address', username: 'gracehopper' });
      expect(invalid.status).toBe(400);
      expect(invalid.body.errors?.[0]?.param).toBe('email');

      // A new address the provider did not vouch for: confirmed by mail first, as mandatory verification says.
      const done = await api.post('/auth/provider/signup', { email: 'grace.hopper@corp.example', username: 'gracehopper' });
      expect(done.status).toBe(401);
      expect(done.body.data.flows).toContainEqual({ id: 'verify_email', is_pending: true });
      expect(latchkey.mailer.lastTo('grace.hopper@corp.example')).toBeDefined();
      const created = (await latchkey.deps.store.users.findByEmail('grace.hopper@corp.example'))!;
      expect(created).toMatchObject({ username: 'gracehopper', name: 'Grace Hopper' });
      expect(await latchkey.deps.store.socialAccounts.find('corp', 'grace-at-corp')).toMatchObject({ userId: created.id });
      expect((await api.get('/auth/provider/signup')).status).toBe(409);
      expect((await api.post('/auth/provider/signup', { email: 'x@corp.example', username: 'x' })).status).toBe(409);
    });

    it('lists provider accounts, disconnects one, and refuses to disconnect the last way in or someone else’s', async () => {
      await setUp();
      const api = client(which);
      expect((await api.get('/account/providers')).status).toBe(401);
      expect((await tokenLogin(api, 'ada-at-corp')).status).toBe(200);
      const corp = expect.objectContaining({ id: 'corp', name: 'Corp SSO' });
      expect((await api.get('/account/providers')).body.data).toEqual([{ uid: 'ada-at-corp', display: 'Ada Lovelace', provider: corp }]);

      // Ada has no password: the provider is her only way in.
      const last = await api.delete('/account/providers', { provider: 'corp', account: 'ada-at-corp' });
      expect(last.status).toBe(400);
      expect(last.body.errors).toEqual([{ message: 'Your account has no password set up.', code: 'no_password', param: 'account' }]);
      const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
      await latchkey.deps.store.socialAccounts.create({ userId: grace.id, provider: 'corp', uid: 'grace-at-corp', extraData: {}, dateJoined: latchkey.clock.now(), lastLogin: latchkey.clock.now() });
      const notHers = await api.delete('/account/providers', { provider: 'corp', account: 'grace-at-corp' });
      expect(notHers.status).toBe(400);
      expect(notHers.body.errors?.[0]?.code).toBe('account_not_found');
      expect(await latchkey.deps.store.socialAccounts.find('corp', 'grace-at-corp')).toBeDefined();

      // Grace, with a password and a verified address, may drop it: after a recent sign-in.
      const graceApi = client(which);
      expect((await graceApi.post('/auth/login', { username: 'grace', password: PASSWORD })).status).toBe(200);
      latchkey.clock.advance(STALE_MS);
      const stale = await graceApi.delete('/account/providers', { provider: 'corp', account: 'grace-at-corp' });
      expect(stale.status).toBe(401);
      expect(stale.body.meta.is_authenticated).toBe(true);
      expect(stale.body.data.flows).toContainEqual({ id: 'reauthenticate' });
      expect((await graceApi.post('/auth/reauthenticate', { password: PASSWORD })).status).toBe(200);
      const removed = await graceApi.delete('/account/providers', { provider: 'corp', account: 'grace-at-corp' });
      expect(removed.status).toBe(200);
      expect(removed.body.data).toEqual([]);
      expect(latchkey.mailer.lastTo('grace@example.com')?.subject).toMatch(/disconnected|removed/i);
    });

    it('refuses to disconnect the only provider of a user without a verified address under mandatory verification', async () => {
      await setUp();
      const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: false });
      await latchkey.deps.store.socialAccounts.create({ userId: bob.id, provider: 'corp', uid: 'ada-at-corp', extraData: {}, dateJoined: latchkey.clock.now(), lastLogin: latchkey.clock.now() });
      const api = client(which);
      // Bob's logins stop at verify_email; here the test makes his session, and he confirms his password.
      const session = await latchkey.deps.sessions.create({ userId: bob.id });
      if (which === 'app') api.sessionToken = session.id;
      else api.cookies.set(latchkey.deps.settings.SESSION_COOKIE_NAME, session.id);
      expect((await api.post('/auth/reauthenticate', { password: PASSWORD })).status).toBe(200);
      const refused = await api.delete('/account/providers', { provider: 'corp', account: 'ada-at-corp' });
      expect([refused.status, refused.body.errors?.[0]?.code]).toEqual([400, 'no_verified_email']);
    });

    it('connects with a token for the signed-in user, never someone else’s provider account', async () => {
      await setUp();
      await createUser(latchkey.deps, { username: 'gracie', email: 'grace@home.example', password: PASSWORD, emailVerified: true });
      const api = client(which);
      const connectBody = async (sub: string) => ({ provider: 'corp', process: 'connect', token: { client_id: 'mobile', id_token: await idTokenFromProvider(sub) } });
      expect((await api.post('/auth/provider/token', await connectBody('grace-at-corp'))).status).toBe(401);
      expect((await api.post('/auth/login', { username: 'gracie', password: PASSWORD })).status).toBe(200);
      const connected = await api.post('/auth/provider/token', await connectBody('grace-at-corp'));
      expect(connected.status).toBe(200);
      expect((await api.get('/account/providers')).body.data).toEqual([expect.objectContaining({ uid: 'grace-at-corp' })]);

      // Ada's provider account belongs to Ada.
      expect((await tokenLogin(client(which), 'ada-at-corp')).status).toBe(200);
      const theirs = await api.post('/auth/provider/token', await connectBody('ada-at-corp'));
      expect(theirs.status).toBe(400);
      expect(theirs.body.errors?.[0]?.code).toBe('connected_other');
    });
  });

  it("answers in the shapes of Latchkey's own OpenAPI document too", async () => {
    await setUp();
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addSchema(headlessOpenApiDocument(latchkey.settings), 'latchkey');
    const expectShape = (pointer: string, body: unknown) => {
      const validate = ajv.compile({ $ref: `latchkey#/components/${pointer}` });
      expect(validate(body), `${pointer}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    };
    await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    const api = client('browser');
    expectShape('responses/Configuration/content/application~1json/schema', (await api.get('/config')).body);
    expectShape('schemas/AuthenticationResponse', (await tokenLogin(api, 'grace-at-corp')).body);
    expectShape('responses/ProviderSignup/content/application~1json/schema', (await api.get('/auth/provider/signup')).body);
    const ada = api.another();
    expectShape('schemas/AuthenticatedResponse', (await tokenLogin(ada, 'ada-at-corp')).body);
    expectShape('responses/ProviderAccounts/content/application~1json/schema', (await ada.get('/account/providers')).body);
  });

  it('after a redirect sign-in of a user with an authenticator app, the session shows the pending code step', async () => {
    await setUp();
    const first = client('browser');
    await redirectSignIn(first, 'ada-at-corp');
    const totp = await activateTotpFor(latchkey, (await latchkey.deps.store.users.findByEmail('ada@corp.example'))!);
    const browser = client('browser');
    expect(await redirectSignIn(browser, 'ada-at-corp')).toBe(FRONT_END_CALLBACK);
    const session = await browser.get('/auth/session');
    expect(session.status).toBe(401);
    expect(session.body.data.flows).toContainEqual({ id: 'mfa_authenticate', is_pending: true, types: ['totp', 'recovery_codes'] });
    expect((await browser.post('/auth/2fa/authenticate', { code: totp.code() })).status).toBe(200);
  });
});

describe.each(testDatabaseKinds())('headless social sign-in with HEADLESS_ONLY on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  async function setUp(errorRoute: boolean): Promise<HeadlessTestClient> {
    const corp = { provider_id: 'corp', name: 'Corp SSO', client_id: 'latchkey', secret: 'provider-secret', settings: { server_url: provider.issuer } };
    const frontEndUrls = {
      account_confirm_email: `${FRONT_END}/verify/{key}`,
      account_reset_password_from_key: `${FRONT_END}/password/reset/{key}`,
      ...(errorRoute ? { socialaccount_login_error: `${FRONT_END}/login/error` } : {}),
    };
    latchkey = await createTestLatchkey({
      kind,
      settings: { HEADLESS_ONLY: true, HEADLESS_FRONTEND_URLS: frontEndUrls, CORS_ALLOWED_ORIGINS: [FRONT_END], SOCIALACCOUNT_PROVIDERS: { openid_connect: { APPS: [corp] } } },
    });
    app = await HeadlessTestClient.createApp(latchkey);
    return new HeadlessTestClient(app, 'browser', latchkey);
  }

  const get = (browser: HeadlessTestClient, url: string) =>
    app.inject({ method: 'GET', url, headers: { host: 'testserver' }, cookies: Object.fromEntries(browser.cookies) });

  it('serves the provider callback without the pages, returning the browser to the front end signed in', async () => {
    const browser = await setUp(true);
    expect((await get(browser, '/accounts/oidc/corp/login/')).statusCode).toBe(404);
    const started = await browser.post('/auth/provider/redirect', undefined, { form: { provider: 'corp', callback_url: FRONT_END_CALLBACK, process: 'login' } });
    expect(started.status).toBe(302);
    const callback = await provider.followAuthorization(started.headers.location as string, { as: { login: 'ada-at-corp' } });
    const returned = await get(browser, callback.pathname + callback.search);
    expect([returned.statusCode, returned.headers.location]).toEqual([302, FRONT_END_CALLBACK]);
    for (const cookie of returned.cookies) browser.cookies.set(cookie.name, cookie.value);
    const session = await browser.get('/auth/session');
    expect(session.status).toBe(200);
    expect(session.body.data.user).toMatchObject({ email: 'ada@corp.example' });

    // The same callback again (its state used up): the front end's error route.
    const replayed = await get(browser, callback.pathname + callback.search);
    expect([replayed.statusCode, replayed.headers.location]).toEqual([302, `${FRONT_END}/login/error?error=unknown&error_process=login`]);
  });

  it('answers a callback it cannot place with a plain 400 when the front end names no error route', async () => {
    const browser = await setUp(false);
    const lost = await get(browser, '/accounts/oidc/corp/login/callback/?state=made-up&code=x');
    expect(lost.statusCode).toBe(400);
    expect(lost.headers['content-type']).toMatch(/^text\/plain/);
    expect(lost.headers.location).toBeUndefined();
    expect((await get(browser, '/accounts/oidc/nobody/login/callback/?state=x')).statusCode).toBe(404);
  });
});
