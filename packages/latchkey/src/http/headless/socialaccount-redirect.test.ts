/**
 * Signing in with an OpenID Connect provider through the headless API's redirect, against a real
 * provider (oidc-provider on loopback), on every database: the browser's round trip back to the
 * front end, connecting a provider account (only after a recent sign-in, when it starts and when
 * the provider answers), MFA after a social login, and what must be refused (an open redirect
 * through callback_url, an unknown process, closed signup). Every JSON response is checked against
 * allauth's published contract by the test client.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { FRONT_END, FRONT_END_CALLBACK, HeadlessSocialSite, startHeadlessCorpProvider, CORP_ACCOUNTS, PASSWORD, STALE_MS } from '../../testing/headless-social.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import type { TestOidcProvider } from '../../testing/oidc-provider.js';

let provider: TestOidcProvider;
beforeAll(async () => {
  provider = await startHeadlessCorpProvider(CORP_ACCOUNTS);
});
afterAll(() => provider.close());

describe.each(testDatabaseKinds())('headless redirect sign-in on %s', (kind) => {
  let site: HeadlessSocialSite;
  afterEach(() => site.close());

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    site = await HeadlessSocialSite.create(kind, provider, settings);
  }

  /** A form post that does not reach the provider: where it sends the browser instead. */
  async function refusedStart(browser: HeadlessTestClient, form: Record<string, string>): Promise<string | undefined> {
    const response = await site.startRedirect(browser, form);
    expect(response.status).toBe(302);
    expect(response.headers.location).not.toMatch(new RegExp(`^${provider.issuer}/`));
    return response.headers.location;
  }

  const CORP = { id: 'corp', name: 'Corp SSO', client_id: 'latchkey', flows: ['provider_redirect', 'provider_token'] };

  it('advertises the provider in config and in the flows, the redirect to browsers only', async () => {
    await setUp();
    const corp = { ...CORP, openid_configuration_url: `${provider.issuer}/.well-known/openid-configuration` };
    const browser = site.client('browser');
    expect((await browser.get('/config')).body.data.socialaccount).toEqual({ providers: [corp] });
    const flows = (await browser.get('/auth/session')).body.data.flows;
    expect(flows).toContainEqual({ id: 'provider_redirect', providers: ['corp'] });
    expect(flows).toContainEqual({ id: 'provider_token', providers: ['corp'] });

    const phone = site.client('app');
    expect((await phone.get('/config')).body.data.socialaccount).toEqual({ providers: [corp] });
    const appFlows = (await phone.get('/auth/session')).body.data.flows as { id: string }[];
    expect(appFlows).toContainEqual({ id: 'provider_token', providers: ['corp'] });
    expect(appFlows.map((flow) => flow.id)).not.toContain('provider_redirect');
  });

  it('signs a new person up through the redirect and returns the browser to callback_url, signed in', async () => {
    await setUp();
    const browser = site.client('browser');
    expect(await site.redirectSignIn(browser, 'ada-at-corp')).toBe(FRONT_END_CALLBACK);
    const session = await browser.get('/auth/session');
    expect(session.status).toBe(200);
    expect(session.body.data.user).toMatchObject({ email: 'ada@corp.example', username: 'ada', display: 'Ada Lovelace', has_usable_password: false });
    expect(session.body.data.methods).toEqual([{ method: 'socialaccount', at: site.latchkey.clock.now().getTime() / 1000, provider: 'corp', uid: 'ada-at-corp', reauthenticated: false }]);
    expect((await browser.get('/account/providers')).body.data).toEqual([{ uid: 'ada-at-corp', display: 'Ada Lovelace', provider: expect.objectContaining({ id: 'corp', name: 'Corp SSO' }) }]);
  });

  it('connects a provider account to the signed-in user through the redirect, only after a recent sign-in', async () => {
    await setUp();
    const grace = await createUser(site.latchkey.deps, { username: 'gracie', email: 'grace@home.example', password: PASSWORD, emailVerified: true });
    expect(await refusedStart(site.client('browser'), { process: 'connect' })).toBe(`${FRONT_END_CALLBACK}?error=permission_denied&error_process=connect`);

    const browser = site.client('browser');
    expect((await browser.post('/auth/login', { username: 'gracie', password: PASSWORD })).status).toBe(200);
    expect(await site.redirectSignIn(browser, 'grace-at-corp', { process: 'connect' })).toBe(FRONT_END_CALLBACK);
    expect((await browser.get('/account/providers')).body.data).toEqual([{ uid: 'grace-at-corp', display: 'Grace Hopper', provider: expect.objectContaining({ id: 'corp' }) }]);
    expect((await browser.get('/auth/session')).body.data.user).toMatchObject({ id: grace.id });

    site.latchkey.clock.advance(STALE_MS);
    expect(await refusedStart(browser, { process: 'connect' })).toBe(`${FRONT_END_CALLBACK}?error=reauthentication_required&error_process=connect`);
  });

  it('refuses a connect whose provider answers after the sign-in stopped being recent, and connects nothing', async () => {
    await setUp();
    const grace = await createUser(site.latchkey.deps, { username: 'gracie', email: 'grace@home.example', password: PASSWORD, emailVerified: true });
    const browser = site.client('browser');
    expect((await browser.post('/auth/login', { username: 'gracie', password: PASSWORD })).status).toBe(200);
    // Started within the window; the person lingers at the provider past it.
    const callback = await site.toCallback(browser, 'grace-at-corp', { process: 'connect' });
    site.latchkey.clock.advance(STALE_MS);
    const returned = await site.visit(browser, callback);
    expect(returned.headers.location).toBe(`${FRONT_END_CALLBACK}?error=reauthentication_required&error_process=connect`);
    expect(await site.latchkey.deps.store.socialAccounts.listForUser(grace.id)).toEqual([]);

    // Reauthenticated, the same connect goes through.
    expect((await browser.post('/auth/reauthenticate', { password: PASSWORD })).status).toBe(200);
    expect(await site.redirectSignIn(browser, 'grace-at-corp', { process: 'connect' })).toBe(FRONT_END_CALLBACK);
    expect(await site.latchkey.deps.store.socialAccounts.listForUser(grace.id)).toMatchObject([{ uid: 'grace-at-corp' }]);
  });

  it('refuses to make callback_url an open redirect, and sends bad input back to a safe callback_url', async () => {
    await setUp();
    const browser = site.client('browser');
    for (const callback_url of ['https://evil.example/steal', '//evil.example/', 'https://app.example.com.evil.example/', 'https://app.example.com@evil.example/', 'javascript:alert(1)', '']) {
      const refused = await site.startRedirect(browser, { callback_url });
      expect(refused.status, callback_url).toBe(400);
      expect(refused.headers.location).toBeUndefined();
      expect(refused.body.errors).toEqual([{ message: 'Invalid URL.', code: 'invalid_url', param: 'callback_url' }]);
    }
    // A path on this site is a front end of its own.
    expect((await site.startRedirect(browser, { callback_url: '/spa/callback' })).headers.location).toMatch(new RegExp(`^${provider.issuer}/`));
    expect(await refusedStart(browser, { provider: 'nobody' })).toBe(`${FRONT_END_CALLBACK}?error=unknown&error_process=login`);
    // An unknown process is refused, never taken for a login.
    for (const process of ['steal', 'Connect', 'redirect']) expect(await refusedStart(browser, { process })).toBe(`${FRONT_END_CALLBACK}?error=unknown&error_process=login`);
    // A real form carries the CSRF token: without it nothing starts.
    const forged = await browser.post('/auth/provider/redirect', undefined, { csrf: false, form: { provider: 'corp', callback_url: FRONT_END_CALLBACK, process: 'login' } });
    expect(forged.status).toBe(403);
    expect(forged.headers.location).toBeUndefined();
  });

  it('sends a refused callback_url to the front end’s error route when it has one', async () => {
    await setUp({ HEADLESS_FRONTEND_URLS: { socialaccount_login_error: `${FRONT_END}/login/error` } });
    const refused = await site.startRedirect(site.client('browser'), { callback_url: 'https://evil.example/', process: 'connect' });
    expect(refused.status).toBe(302);
    expect(refused.headers.location).toBe(`${FRONT_END}/login/error?error=invalid_url&error_process=connect`);
  });

  it('with signup closed: 403 for a token, ?error=signup_closed after the redirect, nobody signed up', async () => {
    await setUp({ ACCOUNT_ALLOW_REGISTRATION: false });
    const browser = site.client('browser');
    expect(await site.redirectSignIn(browser, 'ada-at-corp')).toBe(`${FRONT_END_CALLBACK}?error=signup_closed&error_process=login`);
    expect((await browser.get('/auth/session')).status).toBe(401);
    const refused = await site.tokenLogin(site.client('app'), 'ada-at-corp');
    expect(refused.status).toBe(403);
    expect(refused.body.errors?.[0]?.code).toBe('signup_closed');
    expect(await site.latchkey.deps.store.users.count()).toBe(0);
  });

  it('after a redirect sign-in of a user with an authenticator app, the session shows the pending code step', async () => {
    await setUp();
    await site.redirectSignIn(site.client('browser'), 'ada-at-corp');
    const totp = await activateTotpFor(site.latchkey, (await site.latchkey.deps.store.users.findByEmail('ada@corp.example'))!);
    const browser = site.client('browser');
    expect(await site.redirectSignIn(browser, 'ada-at-corp')).toBe(FRONT_END_CALLBACK);
    const session = await browser.get('/auth/session');
    expect(session.status).toBe(401);
    expect(session.body.data.flows).toContainEqual({ id: 'mfa_authenticate', is_pending: true, types: ['totp', 'recovery_codes'] });
    expect((await browser.post('/auth/2fa/authenticate', { code: totp.code() })).status).toBe(200);
  });
});

describe.each(testDatabaseKinds())('headless social sign-in with HEADLESS_ONLY on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: HeadlessTestClient;
  afterEach(async () => {
    await browser.app.close();
    await latchkey.destroy();
  });

  async function setUp(errorRoute: boolean): Promise<void> {
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
    // ID tokens are checked on the site's clock: it starts at the provider's time.
    latchkey.clock.set(provider.now());
    browser = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'browser', latchkey);
  }

  const get = (url: string) => browser.app.inject({ method: 'GET', url, headers: { host: 'testserver' }, cookies: Object.fromEntries(browser.cookies) });

  it('serves the provider callback without the pages, returning the browser to the front end signed in', async () => {
    await setUp(true);
    expect((await get('/accounts/oidc/corp/login/')).statusCode).toBe(404);
    const started = await browser.post('/auth/provider/redirect', undefined, { form: { provider: 'corp', callback_url: FRONT_END_CALLBACK, process: 'login' } });
    expect(started.status).toBe(302);
    const callback = await provider.followAuthorization(started.headers.location as string, { as: { login: 'ada-at-corp' } });
    const returned = await get(callback.pathname + callback.search);
    expect([returned.statusCode, returned.headers.location]).toEqual([302, FRONT_END_CALLBACK]);
    for (const cookie of returned.cookies) browser.cookies.set(cookie.name, cookie.value);
    const session = await browser.get('/auth/session');
    expect(session.status).toBe(200);
    expect(session.body.data.user).toMatchObject({ email: 'ada@corp.example' });

    // The same callback again (its state used up): the front end's error route.
    const replayed = await get(callback.pathname + callback.search);
    expect([replayed.statusCode, replayed.headers.location]).toEqual([302, `${FRONT_END}/login/error?error=unknown&error_process=login`]);
  });

  it('answers a callback it cannot place with a plain 400 when the front end names no error route', async () => {
    await setUp(false);
    const lost = await get('/accounts/oidc/corp/login/callback/?state=made-up&code=x');
    expect(lost.statusCode).toBe(400);
    expect(lost.headers['content-type']).toMatch(/^text\/plain/);
    expect(lost.headers.location).toBeUndefined();
    expect((await get('/accounts/oidc/nobody/login/callback/?state=x')).statusCode).toBe(404);
  });
});
