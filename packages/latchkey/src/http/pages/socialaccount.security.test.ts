/**
 * Social sign-in on the pages under attack or failure, on every database: a cross-site POST to
 * start one, an unknown `process`, a callback with no state, an open redirect through `next`, and
 * a provider that hangs or answers garbage. Each is refused with 403 or ends on a page that says
 * the sign-in failed (never a 500, never a stack trace), with nobody signed in.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { startHostileOidcServer, type HostileBehaviour, type HostileOidcServer } from '../../testing/hostile-oidc-server.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const LOGIN = '/accounts/oidc/hostile/login/';
const ERROR_PAGE = '/accounts/3rdparty/login/error/';

let hostile: HostileOidcServer;
beforeAll(async () => {
  hostile = await startHostileOidcServer();
});
afterAll(() => hostile.close());

describe.each(testDatabaseKinds())('social sign-in on the pages, attacked or failing, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(behaviour: HostileBehaviour = {}, settings: Partial<SettingValues> = {}): Promise<void> {
    hostile.behaviour = behaviour;
    const app = { provider_id: 'hostile', name: 'Hostile', client_id: hostile.clientId, secret: hostile.clientSecret, settings: { server_url: hostile.issuer } };
    latchkey = await createTestLatchkey({ kind, settings: { SOCIALACCOUNT_PROVIDERS: { openid_connect: { APPS: [app] } }, ...settings } });
    // The provider issues its ID tokens on the site's clock, which checks them.
    hostile.clock = latchkey.clock;
    browser = await PageClient.create(latchkey);
  }

  /** The button (with `fields`), the provider, and the callback: where the browser is sent then. */
  async function signIn(fields: Record<string, string> = {}): Promise<string | undefined> {
    const started = await browser.post(LOGIN, fields);
    const callback = await hostile.followAuthorization(new URL(started.headers.location!));
    return (await browser.get(callback.pathname + callback.search)).headers.location;
  }

  async function expectSignedOut(): Promise<void> {
    expect((await latchkey.deps.sessions.load(browser.cookies.get('sessionid')))?.userId ?? null).toBeNull();
  }

  /** What the browser's session holds (nothing without one): a sign-in started would be kept there. */
  async function sessionData(): Promise<unknown> {
    return (await latchkey.deps.sessions.load(browser.cookies.get('sessionid')))?.data ?? {};
  }

  it('refuses a cross-site POST to start a sign-in with 403, and starts nothing', async () => {
    await setUp();
    await browser.get(LOGIN);
    const before = await sessionData();
    const crossSite: [Record<string, string>, boolean][] = [
      [{ origin: 'https://evil.example' }, true],
      [{ origin: 'null' }, true],
      [{ 'sec-fetch-site': 'cross-site' }, true],
      [{ origin: 'https://evil.example' }, false],
      [{}, false],
    ];
    for (const [headers, csrf] of crossSite) {
      const refused = await browser.post(LOGIN, { next: '/accounts/email/' }, { csrf, headers });
      expect(refused.statusCode, JSON.stringify({ headers, csrf })).toBe(403);
      expect(refused.headers.location).toBeUndefined();
    }
    expect(await sessionData()).toEqual(before);
    await expectSignedOut();
    // The same button, from this site, does start one.
    expect(new URL((await browser.post(LOGIN, {}, { headers: { origin: 'http://testserver' } })).headers.location!).origin).toBe(new URL(hostile.issuer).origin);
  });

  it('refuses an unknown process on the error page, starting nothing, rather than signing in', async () => {
    await setUp();
    await browser.get(LOGIN);
    const before = await sessionData();
    for (const process of ['steal', 'Connect', 'redirect']) {
      expect((await browser.post(LOGIN, { process })).headers.location, process).toBe(ERROR_PAGE);
      expect((await browser.get(`${LOGIN}?process=${process}`)).headers.location, process).toBe(ERROR_PAGE);
    }
    expect(await sessionData()).toEqual(before);
  });

  it('refuses a callback without a state, or with only an error', async () => {
    await setUp();
    for (const query of ['?code=anything', '?error=access_denied', '']) {
      const answered = await browser.get(`${LOGIN}callback/${query}`);
      expect(answered.headers.location).toBe(ERROR_PAGE);
    }
    const page = await browser.get(ERROR_PAGE);
    expect(page.statusCode).toBe(401);
    expect(page.body).toContain('An error occurred while attempting to sign in via your third-party account.');
    await expectSignedOut();
  });

  it('goes to a `next` on this site after signing in, and never to another site', async () => {
    await setUp();
    expect(await signIn({ next: '/accounts/email/' })).toBe('/accounts/email/');
    for (const next of ['https://evil.example/', '//evil.example/', '/\\evil.example/', 'javascript:alert(1)']) {
      await browser.post('/accounts/logout/', {});
      expect(await signIn({ next })).toBe('/');
    }
  });

  it('ends a sign-in whose provider never answers on the error page, within SOCIALACCOUNT_REQUESTS_TIMEOUT', async () => {
    await setUp({ token: 'hang' }, { SOCIALACCOUNT_REQUESTS_TIMEOUT: 1 });
    expect(await signIn()).toBe(ERROR_PAGE);
    await expectSignedOut();
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });

  it('ends a sign-in whose provider answers garbage, or a bad ID token, on the error page', async () => {
    for (const behaviour of [{ token: 'garbage' }, { userinfo: () => '{"sub": ' }, { idTokenSigning: 'none' }, { idTokenClaims: () => ({ iss: 'https://evil.example' }) }] as HostileBehaviour[]) {
      await setUp(behaviour);
      expect(await signIn()).toBe(ERROR_PAGE);
      await expectSignedOut();
      await browser.close();
      await latchkey.destroy();
    }
    await setUp();
  });
});
