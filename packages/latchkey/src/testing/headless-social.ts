/**
 * The headless social sign-in tests' shared ground: "Corp SSO" served by a real OpenID provider
 * (testing/oidc-provider.ts) with a web app (the redirect) and a mobile app (hidden: token logins
 * only) under one provider_id, a site configured for it, and the trips a front end or a mobile app
 * makes through it. Like oidc-provider.ts, it is imported by path, not from testing/index.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { REAUTHENTICATION_WINDOW_SECONDS } from '../account/flows/reauthenticate.js';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { SettingValues } from '../config/settings.js';
import type { TestDatabaseKind } from './database.js';
import { HeadlessTestClient, type HeadlessResponse } from './headless.js';
import { createTestLatchkey, type TestLatchkey, type TestLatchkeyOptions } from './latchkey.js';
import { startTestOidcProvider, type TestOidcAccount, type TestOidcProvider } from './oidc-provider.js';

/** The password of the accounts these tests make. */
export const PASSWORD = 'a long enough passphrase';
/** Past the five minutes within which a sign-in counts as a recent proof of identity. */
export const STALE_MS = (REAUTHENTICATION_WINDOW_SECONDS + 1) * 1000;

/** The people at the Corp identity provider: one at the provider's domain, one at another. */
export const CORP_ACCOUNTS: TestOidcAccount[] = [
  { sub: 'ada-at-corp', claims: { email: 'ada@corp.example', email_verified: true, name: 'Ada Lovelace', preferred_username: 'ada' } },
  { sub: 'grace-at-corp', claims: { email: 'grace@example.com', email_verified: true, name: 'Grace Hopper', preferred_username: 'grace' } },
];

export const CORP_CALLBACK = 'http://testserver/accounts/oidc/corp/login/callback/';
export const MOBILE_REDIRECT = 'http://mobile.example/callback';
export const FRONT_END = 'https://app.example.com';
export const FRONT_END_CALLBACK = `${FRONT_END}/account/provider/callback`;

/** The provider with the site's web client and the mobile app's client. */
export function startHeadlessCorpProvider(accounts: TestOidcAccount[]): Promise<TestOidcProvider> {
  return startTestOidcProvider({
    clients: [
      { client_id: 'latchkey', client_secret: 'provider-secret', redirect_uris: [CORP_CALLBACK] },
      { client_id: 'mobile', client_secret: 'mobile-secret', redirect_uris: [MOBILE_REDIRECT] },
    ],
    accounts,
  });
}

/** Another identity provider altogether, with a `mobile` client too: its tokens name another issuer and are signed with another key. */
export function startStrangerProvider(accounts: TestOidcAccount[]): Promise<TestOidcProvider> {
  return startTestOidcProvider({ clients: [{ client_id: 'mobile', client_secret: 'mobile-secret', redirect_uris: [MOBILE_REDIRECT] }], accounts });
}

/**
 * A mobile app's own sign-in at the provider, to its ID token: the authorization code flow with
 * PKCE as client `mobile`, the code exchanged at the provider's token endpoint. A real token, as
 * the provider issues them.
 */
export async function idTokenFromProvider(at: TestOidcProvider, sub: string): Promise<string> {
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
  if (tokens.id_token === undefined) throw new Error(`The provider issued no ID token: ${JSON.stringify(tokens)}`);
  return tokens.id_token;
}

/** A site with Corp SSO's two apps, mounted with the headless API, and the trips through it. */
export class HeadlessSocialSite {
  private constructor(
    readonly latchkey: TestLatchkey,
    readonly app: FastifyInstance,
    readonly provider: TestOidcProvider,
  ) {}

  /**
   * With mandatory email verification and the front end's origin allowed, unless `settings` say
   * otherwise; with the project's social adapter when `socialAdapter` is given.
   */
  static async create(
    kind: TestDatabaseKind,
    provider: TestOidcProvider,
    settings: Partial<SettingValues> = {},
    socialAdapter?: TestLatchkeyOptions['socialAdapter'],
  ): Promise<HeadlessSocialSite> {
    const server = { server_url: provider.issuer };
    const apps = [
      { provider_id: 'corp', name: 'Corp SSO', client_id: 'latchkey', secret: 'provider-secret', settings: server },
      { provider_id: 'corp', name: 'Corp SSO', client_id: 'mobile', settings: { ...server, hidden: true } },
    ];
    const latchkey = await createTestLatchkey({
      kind,
      settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', CORS_ALLOWED_ORIGINS: [FRONT_END], SOCIALACCOUNT_PROVIDERS: { openid_connect: { APPS: apps } }, ...settings },
      ...(socialAdapter ? { socialAdapter } : {}),
    });
    // ID tokens are checked on the site's clock: it starts at the provider's time.
    latchkey.clock.set(provider.now());
    return new HeadlessSocialSite(latchkey, await HeadlessTestClient.createApp(latchkey), provider);
  }

  client(which: 'browser' | 'app'): HeadlessTestClient {
    return new HeadlessTestClient(this.app, which, this.latchkey);
  }

  /** The browser following a redirect to this site (the provider's callback), keeping the cookies it is given. */
  async visit(browser: HeadlessTestClient, url: URL | string): Promise<LightMyRequestResponse> {
    const target = new URL(url, 'http://testserver');
    if (target.origin !== 'http://testserver') throw new Error(`Not this site: ${target.origin}`);
    const response = await this.app.inject({ method: 'GET', url: target.pathname + target.search, headers: { host: 'testserver' }, cookies: Object.fromEntries(browser.cookies) });
    await this.latchkey.deps.background.idle();
    for (const cookie of response.cookies) {
      if (cookie.value === '' || (cookie.maxAge !== undefined && cookie.maxAge <= 0)) browser.cookies.delete(cookie.name);
      else browser.cookies.set(cookie.name, cookie.value);
    }
    return response;
  }

  /** The front end's form post to start a redirect sign-in (`form` adds to or overrides provider, callback_url and process). */
  startRedirect(browser: HeadlessTestClient, form: Record<string, string> = {}): Promise<HeadlessResponse> {
    return browser.post('/auth/provider/redirect', undefined, { form: { provider: 'corp', callback_url: FRONT_END_CALLBACK, process: 'login', ...form } });
  }

  /** The form post, the provider's sign-in as `login`, and the provider's callback URL back to this site. Throws when the post does not reach the provider. */
  async toCallback(browser: HeadlessTestClient, login: string, form: Record<string, string> = {}): Promise<URL> {
    const started = await this.startRedirect(browser, form);
    const location = started.headers.location;
    if (started.status !== 302 || typeof location !== 'string' || !location.startsWith(`${this.provider.issuer}/`)) {
      throw new Error(`The sign-in did not reach the provider: ${started.status} ${String(location)}`);
    }
    return this.provider.followAuthorization(location, { as: { login } });
  }

  /** The whole redirect round trip: where the callback sends the browser (the front end, perhaps with ?error=). */
  async redirectSignIn(browser: HeadlessTestClient, login: string, form: Record<string, string> = {}): Promise<string | undefined> {
    const returned = await this.visit(browser, await this.toCallback(browser, login, form));
    if (returned.statusCode !== 302) throw new Error(`The callback answered ${returned.statusCode}`);
    return returned.headers.location;
  }

  /** A mobile app's token login with a real ID token for `sub` from the provider. */
  async tokenLogin(api: HeadlessTestClient, sub: string): Promise<HeadlessResponse> {
    return api.post('/auth/provider/token', { provider: 'corp', process: 'login', token: { client_id: 'mobile', id_token: await idTokenFromProvider(this.provider, sub) } });
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.latchkey.destroy();
  }
}
