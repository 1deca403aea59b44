/**
 * The OpenID Connect-based providers (google, slack, linkedin, linkedin_oauth2, okta, auth0, keycloak,
 * salesforce) against one real OpenID Connect provider (oidc-provider on loopback, its issuer at
 * /realms/latchkey so that Keycloak's realm URL can point at it), each configured by its own
 * settings keys; and amazon_cognito against a fixture of its hosted-UI endpoints, at allauth's slug
 * amazon-cognito (the only callback URL its fixture takes). For each, on
 * every database, through the pages: a new person signed up (verified address signed in at once,
 * an unverified one sent to confirm it), the same person signed in again, consent declined, and
 * a provider that reports an error.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { MOBILE_REDIRECT, idTokenFromProvider } from '../../../testing/headless-social.js';
import { HeadlessTestClient } from '../../../testing/headless.js';
import { testDatabaseKinds } from '../../../testing/database.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../../../testing/latchkey.js';
import { startTestOidcProvider, type TestOidcProvider } from '../../../testing/oidc-provider.js';
import { PageClient } from '../../../testing/pages.js';
import { startCognitoFixture, type CognitoFixture } from '../../../testing/providers/cognito-fixture.js';
import type { ProviderKind } from '../kind.js';
import { OPENID_CONNECT_BASED_PROVIDER_KINDS } from './openid-connect-based.js';
import { oktaProviderKind } from './okta.js';

const CLIENT = { id: 'latchkey', secret: 'provider-secret' };
const REALM = 'latchkey';
const OIDC_TYPES = ['google', 'slack', 'linkedin', 'linkedin_oauth2', 'okta', 'auth0', 'keycloak', 'salesforce'] as const;
/** Cognito's URLs carry allauth's slug, amazon-cognito; the others', their id. */
const COGNITO_SLUG = 'amazon-cognito';
const callbackOf = (slug: string) => `http://testserver/accounts/${slug}/login/callback/`;

/** Ada's address is vouched for; Bob's is not (email_verified false, or Cognito's "false"). */
const PEOPLE = {
  ada: { sub: 'ada-sub', email: 'ada@example.com', name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace', preferred_username: 'ada' },
  bob: { sub: 'bob-sub', email: 'bob@example.com', name: 'Bob Unverified', preferred_username: 'bob' },
};

let oidc: TestOidcProvider;
let cognito: CognitoFixture;
beforeAll(async () => {
  oidc = await startTestOidcProvider({
    issuerPath: `/realms/${REALM}`,
    clients: [
      { client_id: CLIENT.id, client_secret: CLIENT.secret, redirect_uris: OIDC_TYPES.map(callbackOf) },
      { client_id: 'mobile', client_secret: 'mobile-secret', redirect_uris: [MOBILE_REDIRECT] },
    ],
    accounts: [
      { sub: PEOPLE.ada.sub, claims: { ...PEOPLE.ada, email_verified: true } },
      { sub: PEOPLE.bob.sub, claims: { ...PEOPLE.bob, email_verified: false } },
    ],
  });
  cognito = await startCognitoFixture({
    clientId: CLIENT.id,
    clientSecret: CLIENT.secret,
    callbackUrls: [callbackOf(COGNITO_SLUG)],
    users: [
      { sub: PEOPLE.ada.sub, email: PEOPLE.ada.email, email_verified: 'true', username: 'ada', name: PEOPLE.ada.name, phone_number_verified: 'false' },
      { sub: PEOPLE.bob.sub, email: PEOPLE.bob.email, email_verified: 'false', username: 'bob' },
    ],
  });
});
afterAll(async () => {
  await oidc?.close();
  await cognito?.close();
});

/** What the person does at the provider, or the error the provider reports instead. */
type Outcome = { login: string } | { deny: true } | { error: string };

interface Row {
  type: string;
  /** The segment of its URLs, /accounts/<slug>/login/: its id unless its kind has a slug. */
  slug: string;
  /** The app's settings that point the provider at the test server, each through the provider's own keys where it has them. */
  settings: () => Record<string, unknown>;
  /** The provider's side, from its authorization URL back to the callback. */
  consent: (authorizationUrl: string, outcome: Outcome) => Promise<URL>;
}

/**
 * At oidc-provider: a login or a refusal; a failure as an OpenID Connect provider reports one
 * (RFC 6749 §4.1.2.1, with the issuer of RFC 9207), to the redirect_uri with the request's state.
 */
async function atOidc(authorizationUrl: string, outcome: Outcome): Promise<URL> {
  if (!('error' in outcome)) return oidc.followAuthorization(authorizationUrl, { as: outcome });
  const asked = new URL(authorizationUrl).searchParams;
  const back = new URL(asked.get('redirect_uri')!);
  back.search = new URLSearchParams({ error: outcome.error, error_description: 'the provider failed', state: asked.get('state')!, iss: oidc.issuer }).toString();
  return back;
}

const oidcRow = (type: string, settings: () => Record<string, unknown>): Row => ({ type, slug: type, settings, consent: atOidc });
const ROWS: Row[] = [
  oidcRow('google', () => ({ server_url: oidc.issuer })),
  oidcRow('slack', () => ({ server_url: oidc.issuer })),
  oidcRow('linkedin', () => ({ server_url: oidc.issuer })),
  oidcRow('linkedin_oauth2', () => ({ server_url: oidc.issuer })),
  oidcRow('okta', () => ({ okta_base_url: oidc.issuer })),
  oidcRow('auth0', () => ({ auth0_url: oidc.issuer })),
  oidcRow('keycloak', () => ({ keycloak_url: new URL(oidc.issuer).origin, keycloak_realm: REALM })),
  oidcRow('salesforce', () => ({ instance_url: oidc.issuer })),
  { type: 'amazon_cognito', slug: COGNITO_SLUG, settings: () => ({ domain: cognito.domain }), consent: (url, outcome) => cognito.authorize(url, { as: outcome }) },
];

describe('the batch', () => {
  it('registers every provider of the table, under allauth ids', () => {
    expect(OPENID_CONNECT_BASED_PROVIDER_KINDS.map((kind) => kind.id).sort()).toEqual(ROWS.map((row) => row.type).sort());
  });

  it('reads where each provider lives from its own settings: the discovery (or endpoint) it asks first', async () => {
    const kindOf = (type: string): ProviderKind => OPENID_CONNECT_BASED_PROVIDER_KINDS.find((kind) => kind.id === type)!;
    const firstRequest = async (type: string, settings: Record<string, unknown>): Promise<string> => {
      const asked: string[] = [];
      const fetch = (input: string | URL | Request): Promise<Response> => {
        asked.push(String(input instanceof Request ? input.url : input));
        return Promise.reject(new Error('offline'));
      };
      const app = { provider: type, providerId: '', id: type, name: type, clientId: 'c', secret: 's', key: '', settings };
      const provider = kindOf(type).build(app, { settings: testSettings(), clock: new ManualClock('2031-01-01T00:00:00Z'), http: { fetch, timeoutSeconds: 1 } });
      const origin = await provider.authorizationOrigin().catch(() => undefined);
      return asked[0] ?? `${origin}`;
    };
    const discovery = (issuer: string) => `${issuer}/.well-known/openid-configuration`;
    expect(await firstRequest('google', {})).toBe(discovery('https://accounts.google.com'));
    expect(await firstRequest('slack', {})).toBe(discovery('https://slack.com'));
    expect(await firstRequest('linkedin', {})).toBe(discovery('https://www.linkedin.com/oauth'));
    expect(await firstRequest('linkedin_oauth2', {})).toBe(discovery('https://www.linkedin.com/oauth'));
    expect(await firstRequest('okta', { okta_base_url: 'dev-123.okta.com' })).toBe(discovery('https://dev-123.okta.com'));
    expect(await firstRequest('auth0', { auth0_url: 'https://tenant.auth0.com/' })).toBe(discovery('https://tenant.auth0.com'));
    expect(await firstRequest('keycloak', { keycloak_url: 'https://id.example.com/auth', keycloak_realm: 'staff' })).toBe(discovery('https://id.example.com/auth/realms/staff'));
    expect(await firstRequest('salesforce', {})).toBe(discovery('https://login.salesforce.com'));
    expect(await firstRequest('salesforce', { instance_url: 'https://test.salesforce.com' })).toBe(discovery('https://test.salesforce.com'));
    expect(await firstRequest('amazon_cognito', { domain: 'https://pool.auth.eu-west-1.amazoncognito.com' })).toBe('https://pool.auth.eu-west-1.amazoncognito.com');
  });

  it('refuses settings that leave out where the provider is, or that would take a mutable claim for the uid', () => {
    const check = (type: string, settings: Record<string, unknown>) => OPENID_CONNECT_BASED_PROVIDER_KINDS.find((kind) => kind.id === type)!.checkSettings(settings);
    expect(oktaProviderKind.checkSettings({})).toMatchObject({ key: 'okta_base_url', reason: 'required' });
    expect(oktaProviderKind.checkSettings({ okta_base_url: 'dev-123.okta.com' })).toBeUndefined();
    expect(oktaProviderKind.checkSettings({ okta_base_url: 'http://dev-123.okta.com' })).toMatchObject({ key: 'okta_base_url', reason: 'invalid' });
    expect(oktaProviderKind.checkSettings({ okta_base_url: 'dev-123.okta.com', uid_field: 'preferred_username' })).toMatchObject({ key: 'uid_field', reason: 'invalid' });
    expect(check('auth0', {})).toMatchObject({ key: 'auth0_url', reason: 'required' });
    expect(check('keycloak', { keycloak_url: 'https://id.example.com' })).toMatchObject({ key: 'keycloak_realm', reason: 'required' });
    expect(check('amazon_cognito', {})).toMatchObject({ key: 'domain', reason: 'required' });
    expect(check('amazon_cognito', { domain: 'pool.auth.eu-west-1.amazoncognito.com' })).toBeUndefined();
    expect(check('google', {})).toBeUndefined();
  });
});

describe.each(testDatabaseKinds())('OpenID Connect-based providers through the pages, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser?.close();
    await latchkey?.destroy();
  });

  async function setUp(row: Row, providerWide: Record<string, unknown> = {}, apps: Record<string, unknown>[] = []): Promise<void> {
    const app = { client_id: CLIENT.id, secret: CLIENT.secret, settings: row.settings() };
    latchkey = await createTestLatchkey({
      kind,
      settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', SOCIALACCOUNT_PROVIDERS: { [row.type]: { ...providerWide, APPS: [app, ...apps] } } },
    });
    // ID tokens are checked on the site's clock: it starts at the provider's time.
    latchkey.clock.set(oidc.now());
    browser = await PageClient.create(latchkey);
  }

  /** The provider's button, the provider's side, and the callback: the site's answer to it. */
  async function through(row: Row, outcome: Outcome, client = browser) {
    const started = await client.post(`/accounts/${row.slug}/login/`, {});
    expect(started.statusCode).toBe(302);
    expect(new URL(started.headers.location!).searchParams.get('redirect_uri')).toBe(callbackOf(row.slug));
    const callback = await row.consent(started.headers.location!, outcome);
    expect(callback.pathname).toBe(`/accounts/${row.slug}/login/callback/`);
    return client.get(callback.pathname + callback.search);
  }

  describe.each(ROWS)('$type', (row) => {
    it('signs a new person up with the address it vouches for, and signs them in again to the same account', async () => {
      await setUp(row);
      expect((await through(row, { login: PEOPLE.ada.sub })).headers.location).toBe('/');
      const ada = (await latchkey.deps.store.users.findByEmail(PEOPLE.ada.email))!;
      expect(ada).toMatchObject({ name: PEOPLE.ada.name });
      expect(await latchkey.deps.store.emailAddresses.listForUser(ada.id)).toMatchObject([{ email: PEOPLE.ada.email, verified: true, primary: true }]);
      expect(await latchkey.deps.store.socialAccounts.listForUser(ada.id)).toMatchObject([{ provider: row.type, uid: PEOPLE.ada.sub }]);

      const again = browser.another();
      expect((await through(row, { login: PEOPLE.ada.sub }, again)).headers.location).toBe('/');
      expect((await latchkey.deps.sessions.load(again.cookies.get('sessionid')))?.userId).toBe(ada.id);
      expect(await latchkey.deps.store.users.count()).toBe(1);
    });

    it('sends a new person whose address the provider does not vouch for to confirm it', async () => {
      await setUp(row);
      const answer = await through(row, { login: PEOPLE.bob.sub });
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toContain('We have sent an email to verify your address.');
      const bob = (await latchkey.deps.store.users.findByEmail(PEOPLE.bob.email))!;
      expect(await latchkey.deps.store.emailAddresses.listForUser(bob.id)).toMatchObject([{ email: PEOPLE.bob.email, verified: false }]);
      expect((await latchkey.deps.sessions.load(browser.cookies.get('sessionid')))?.userId).toBeFalsy();
      expect(latchkey.mailer.lastTo(PEOPLE.bob.email)).toBeDefined();
    });

    it('takes a declined consent to the cancelled page and a provider error to the error page, signing nobody in', async () => {
      await setUp(row);
      expect((await through(row, { deny: true })).headers.location).toBe('/accounts/3rdparty/login/cancelled/');
      expect((await through(row, { error: 'server_error' })).headers.location).toBe('/accounts/3rdparty/login/error/');
      expect((await browser.get('/accounts/3rdparty/login/error/')).statusCode).toBe(401);
      expect(await latchkey.deps.store.users.count()).toBe(0);
    });
  });

  it('google: asks for offline access when AUTH_PARAMS says so, and signs in with an ID token a mobile app hands over', async () => {
    const google = ROWS[0]!;
    await setUp(google, { AUTH_PARAMS: { access_type: 'offline' } }, [{ client_id: 'mobile', settings: { ...google.settings(), hidden: true } }]);
    const started = await browser.post('/accounts/google/login/', {});
    expect(new URL(started.headers.location!).searchParams.get('access_type')).toBe('offline');

    const api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'app', latchkey);
    const token = { client_id: 'mobile', id_token: await idTokenFromProvider(oidc, PEOPLE.ada.sub) };
    const signedIn = await api.post('/auth/provider/token', { provider: 'google', process: 'login', token });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.user).toMatchObject({ email: PEOPLE.ada.email });
    const forged = await api.another().post('/auth/provider/token', { provider: 'google', process: 'login', token: { ...token, id_token: `${token.id_token.slice(0, -4)}AAAA` } });
    expect(forged.status).toBe(400);
  });

  it('amazon_cognito: is served at allauth\'s slug only, by the pages and the headless redirect, its id unchanged', async () => {
    const cognitoRow = ROWS.find((row) => row.type === 'amazon_cognito')!;
    await setUp(cognitoRow);
    expect((await browser.get('/accounts/login/')).body).toContain(`href="/accounts/${COGNITO_SLUG}/login/"`);
    expect((await browser.get(`/accounts/${COGNITO_SLUG}/login/`)).statusCode).toBe(200);
    // Its id is no URL of its: the login and the callback there are unknown pages.
    expect((await browser.get('/accounts/amazon_cognito/login/')).statusCode).toBe(404);
    expect((await browser.post('/accounts/amazon_cognito/login/', {})).statusCode).toBe(404);
    expect((await browser.get('/accounts/amazon_cognito/login/callback/?code=c&state=s')).statusCode).toBe(404);

    // A single-page app starts it by its id; the provider is sent back to the slug's callback.
    const spa = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'browser', latchkey);
    const providers = (await spa.get('/config')).body.data.socialaccount.providers as { id: string; name: string }[];
    expect(providers).toEqual([expect.objectContaining({ id: 'amazon_cognito', name: 'Amazon Cognito' })]);
    const redirect = await spa.post('/auth/provider/redirect', undefined, { form: { provider: 'amazon_cognito', process: 'login', callback_url: '/' } });
    expect(redirect.status).toBe(302);
    expect(new URL(redirect.headers.location!).searchParams.get('redirect_uri')).toBe(callbackOf(COGNITO_SLUG));

    await through(cognitoRow, { login: PEOPLE.ada.sub });
    const ada = (await latchkey.deps.store.users.findByEmail(PEOPLE.ada.email))!;
    expect(await latchkey.deps.store.socialAccounts.listForUser(ada.id)).toMatchObject([{ provider: 'amazon_cognito' }]);
  });

  it('slack: answers token_authentication_not_supported to a headless token login, as allauth', async () => {
    await setUp(ROWS[1]!);
    const api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'app', latchkey);
    const token = { client_id: CLIENT.id, id_token: await oidc.signIdToken({ clientId: CLIENT.id, sub: PEOPLE.ada.sub }) };
    const refused = await api.post('/auth/provider/token', { provider: 'slack', process: 'login', token });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([expect.objectContaining({ code: 'token_authentication_not_supported' })]);
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });
});
