/**
 * The named OpenID Connect providers, each against a test OpenID provider in its documented shape
 * (testing/providers/oidc-shapes.ts: the issuer's form, the endpoints' paths, the claims, each
 * following the page it names): on every database, through the pages, a new person signed up (a
 * vouched-for address signed in at once, another sent to confirm it) and signed in again. Then
 * each provider's own rules: Okta's and Salesforce's uid, Google's two issuer names (redirect and
 * token login), and endpoints an app's settings replace one by one.
 */
import { asRedirectProvider } from '../../../testing/redirect-provider.js';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { testDatabaseKinds } from '../../../testing/database.js';
import { HeadlessTestClient } from '../../../testing/headless.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../../../testing/latchkey.js';
import type { TestOidcProvider } from '../../../testing/oidc-provider.js';
import { PageClient } from '../../../testing/pages.js';
import {
  MOBILE_CLIENT, OIDC_SHAPES, SHAPE_CLIENT, startEndpointGateway, startShapedProvider, type OidcShape,
} from '../../../testing/providers/oidc-shapes.js';
import { openIdConnectProviderKind } from '../openid-connect.js';
import { googleProviderKind } from './google.js';
import { OPENID_CONNECT_BASED_PROVIDER_KINDS } from './openid-connect-based.js';

const providers = new Map<string, TestOidcProvider>();
const shapeOf = (type: string): OidcShape => OIDC_SHAPES.find((shape) => shape.type === type)!;
const providerOf = (type: string): TestOidcProvider => providers.get(type)!;

beforeAll(async () => {
  for (const shape of OIDC_SHAPES) {
    const mobile = shape.type === 'google' ? [{ client_id: MOBILE_CLIENT.id, client_secret: MOBILE_CLIENT.secret, redirect_uris: ['http://mobile.example/callback'] }] : [];
    providers.set(shape.type, await startShapedProvider(shape, mobile));
  }
});
afterAll(async () => {
  await Promise.all([...providers.values()].map((provider) => provider.close()));
});

describe('the shapes', () => {
  it('cover every named OpenID Connect provider', () => {
    const named = OPENID_CONNECT_BASED_PROVIDER_KINDS.map((kind) => kind.id).filter((id) => id !== 'amazon_cognito');
    expect(OIDC_SHAPES.map((shape) => shape.type).sort()).toEqual(named.sort());
  });

  it.each(OIDC_SHAPES)('$type: the test provider publishes the issuer and endpoints as the provider documents them', async (shape) => {
    const provider = providerOf(shape.type);
    const base = provider.issuer.replace(/\/$/, '');
    const document = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, string>;
    expect(document.issuer).toBe(provider.issuer);
    expect(provider.issuer.endsWith('/')).toBe(shape.server.issuerTrailingSlash === true);
    expect(new URL(provider.issuer).pathname.replace(/\/$/, '')).toBe(shape.server.issuerPath ?? '');
    const routes = shape.server.routes!;
    expect(document).toMatchObject({
      authorization_endpoint: `${base}${routes.authorization}`,
      token_endpoint: `${base}${routes.token}`,
      userinfo_endpoint: `${base}${routes.userinfo}`,
      jwks_uri: `${base}${routes.jwks}`,
    });
  });
});

describe('endpoint override settings', () => {
  it('are checked as every endpoint is: https, or plain http on loopback only', () => {
    expect(googleProviderKind.checkSettings({ access_token_url: 'https://proxy.example/token', profile_url: 'http://127.0.0.1:9/userinfo' })).toBeUndefined();
    expect(googleProviderKind.checkSettings({ access_token_url: 'http://proxy.example/token' })).toMatchObject({ key: 'access_token_url', reason: 'invalid' });
    expect(googleProviderKind.checkSettings({ jwks_url: 42 })).toMatchObject({ key: 'jwks_url', reason: 'invalid' });
    const okta = OPENID_CONNECT_BASED_PROVIDER_KINDS.find((kind) => kind.id === 'okta')!;
    expect(okta.checkSettings({ okta_base_url: 'dev-123.okta.com', authorize_url: 'ftp://dev-123.okta.com/authorize' })).toMatchObject({ key: 'authorize_url', reason: 'invalid' });
  });

  it('replace the discovered endpoint only where given', async () => {
    const provider = googleProviderKind.build(
      { provider: 'google', providerId: '', id: 'google', name: 'Google', clientId: 'c', secret: 's', key: '', settings: { authorize_url: 'https://front.example/o/oauth2/v2/auth' } },
      { settings: testSettings(), clock: new ManualClock('2031-01-01T00:00:00Z'), http: { fetch: googleDiscovery().fetch, timeoutSeconds: 1 } },
    );
    const { url } = await provider.authorizationUrl({ redirectUri: 'http://testserver/cb', state: 'state' });
    expect(`${url.origin}${url.pathname}`).toBe('https://front.example/o/oauth2/v2/auth');
    expect(await provider.authorizationOrigin()).toBe('https://front.example');
  });
});

/**
 * Google's own issuer and keys, served by a fetch of the test's: the discovery document at
 * https://accounts.google.com and the keys at https://www.googleapis.com/oauth2/v3/certs, as
 * https://accounts.google.com/.well-known/openid-configuration publishes them.
 */
function googleDiscovery() {
  const keys = generateKeyPair('RS256');
  const fetch = async (input: string | URL | Request): Promise<Response> => {
    const url = String(input instanceof Request ? input.url : input);
    if (url === 'https://accounts.google.com/.well-known/openid-configuration') {
      return Response.json({
        issuer: 'https://accounts.google.com',
        authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
        token_endpoint: 'https://oauth2.googleapis.com/token',
        userinfo_endpoint: 'https://openidconnect.googleapis.com/v1/userinfo',
        jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs',
        id_token_signing_alg_values_supported: ['RS256'],
      });
    }
    if (url === 'https://www.googleapis.com/oauth2/v3/certs') return Response.json({ keys: [{ ...(await exportJWK((await keys).publicKey)), kid: 'google-key', alg: 'RS256', use: 'sig' }] });
    return new Response('not here', { status: 404 });
  };
  const sign = async (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'google-key' }).sign((await keys).privateKey);
  return { fetch, sign };
}

describe("Google's issuer, by its own name", () => {
  it('takes ID tokens that name accounts.google.com or https://accounts.google.com, and no other issuer', async () => {
    const google = googleDiscovery();
    const clock = new ManualClock('2031-01-01T00:00:00Z');
    const provider = asRedirectProvider(
      googleProviderKind.build(
        { provider: 'google', providerId: '', id: 'google', name: 'Google', clientId: 'mobile.apps.googleusercontent.com', secret: '', key: '', settings: {} },
        { settings: testSettings(), clock, http: { fetch: google.fetch, timeoutSeconds: 1 } },
      ),
    );
    const now = Math.floor(clock.now().getTime() / 1000);
    const token = (iss: string) => google.sign({ iss, aud: 'mobile.apps.googleusercontent.com', sub: '110169484474386276334', iat: now, exp: now + 600, email: 'ada@lovelace.example', email_verified: true });
    expect((await provider.verifyIdToken!(await token('https://accounts.google.com'))).uid).toBe('110169484474386276334');
    expect((await provider.verifyIdToken!(await token('accounts.google.com'))).uid).toBe('110169484474386276334');
    for (const other of ['https://accounts.google.com.evil.example', 'http://accounts.google.com', 'accounts.google.com/', 'https://evil.example']) {
      await expect(provider.verifyIdToken!(await token(other))).rejects.toMatchObject({ name: 'ProviderError', reason: 'failed' });
    }
  });

  it('is a rule of the google provider only: the generic openid_connect provider takes the issuer its discovery names', async () => {
    const google = googleDiscovery();
    const clock = new ManualClock('2031-01-01T00:00:00Z');
    const provider = asRedirectProvider(
      openIdConnectProviderKind.build(
        { provider: 'openid_connect', providerId: 'g', id: 'g', name: 'G', clientId: 'c', secret: '', key: '', settings: { server_url: 'https://accounts.google.com' } },
        { settings: testSettings(), clock, http: { fetch: google.fetch, timeoutSeconds: 1 } },
      ),
    );
    const now = Math.floor(clock.now().getTime() / 1000);
    await expect(provider.verifyIdToken!(await google.sign({ iss: 'accounts.google.com', aud: 'c', sub: 's', iat: now, exp: now + 600 }))).rejects.toMatchObject({ reason: 'failed' });
  });
});

describe.each(testDatabaseKinds())('the named OpenID Connect providers in their documented shapes, through the pages, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser?.close();
    await latchkey?.destroy();
    for (const provider of providers.values()) provider.idTokenIssuer = undefined;
  });

  async function setUp(shape: OidcShape, settings: Record<string, unknown> = {}, apps: Record<string, unknown>[] = []): Promise<void> {
    const app = { client_id: SHAPE_CLIENT.id, secret: SHAPE_CLIENT.secret, settings: { ...shape.settings(providerOf(shape.type).issuer), ...settings } };
    latchkey = await createTestLatchkey({
      kind,
      settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', SOCIALACCOUNT_PROVIDERS: { [shape.type]: { APPS: [app, ...apps] } } },
    });
    // ID tokens are checked on the site's clock: it starts at the provider's time.
    latchkey.clock.set(providerOf(shape.type).now());
    browser = await PageClient.create(latchkey);
  }

  /** The provider's button, the provider's side (the person signs in as `sub`), and the site's answer to the callback. */
  async function through(shape: OidcShape, sub: string, client = browser, startAt?: (authorizationUrl: string) => Promise<string>) {
    const started = await client.post(`/accounts/${shape.type}/login/`, {});
    expect(started.statusCode).toBe(302);
    const authorizationUrl = startAt === undefined ? started.headers.location! : await startAt(started.headers.location!);
    const callback = await providerOf(shape.type).followAuthorization(authorizationUrl, { as: { login: sub } });
    expect(callback.pathname).toBe(`/accounts/${shape.type}/login/callback/`);
    return client.get(callback.pathname + callback.search);
  }

  async function signedInUser(client = browser): Promise<unknown> {
    return (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? undefined;
  }

  describe.each(OIDC_SHAPES)('$type', (shape) => {
    it('signs up a new person with the address it vouches for, keeps its claims, and signs them in again to the same account', async () => {
      const person = shape.people.verified;
      await setUp(shape);
      expect((await through(shape, person.sub)).headers.location).toBe('/');
      const user = (await latchkey.deps.store.users.findByEmail(person.email))!;
      expect(user).toMatchObject({ name: person.name });
      expect(await signedInUser()).toBe(user.id);
      expect(await latchkey.deps.store.emailAddresses.listForUser(user.id)).toMatchObject([{ email: person.email, verified: true, primary: true }]);
      const [account] = await latchkey.deps.store.socialAccounts.listForUser(user.id);
      expect(account).toMatchObject({ provider: shape.type, uid: person.sub });
      expect(account!.extraData).toMatchObject({ userinfo: shape.keeps });

      const again = browser.another();
      expect((await through(shape, person.sub, again)).headers.location).toBe('/');
      expect(await signedInUser(again)).toBe(user.id);
      expect(await latchkey.deps.store.users.count()).toBe(1);
    });

    it('sends a new person whose address it does not vouch for (email_verified false) to confirm it', async () => {
      const person = shape.people.unverified;
      await setUp(shape);
      const answer = await through(shape, person.sub);
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toContain('We have sent an email to verify your address.');
      const user = (await latchkey.deps.store.users.findByEmail(person.email))!;
      expect(await latchkey.deps.store.emailAddresses.listForUser(user.id)).toMatchObject([{ email: person.email, verified: false }]);
      expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toMatchObject([{ provider: shape.type, uid: person.sub }]);
      expect(await signedInUser()).toBeFalsy();
      expect(latchkey.mailer.lastTo(person.email)).toBeDefined();
    });
  });

  it('okta: the uid is sub, so a person whose login (preferred_username) was renamed signs in to the same account', async () => {
    const okta = shapeOf('okta');
    const person = okta.people.verified;
    await setUp(okta);
    await through(okta, person.sub);
    const user = (await latchkey.deps.store.users.findByEmail(person.email))!;
    const login = person.claims.preferred_username;
    person.claims.preferred_username = 'johnny.doe@example.com';
    try {
      const again = browser.another();
      expect((await through(okta, person.sub, again)).headers.location).toBe('/');
      expect(await signedInUser(again)).toBe(user.id);
      expect(await latchkey.deps.store.users.count()).toBe(1);
    } finally {
      person.claims.preferred_username = login;
    }
  });

  it('salesforce: the uid is sub, the identity URL, unless uid_field names user_id (allauth\'s)', async () => {
    const salesforce = shapeOf('salesforce');
    const person = salesforce.people.verified;
    await setUp(salesforce, { uid_field: 'user_id' });
    expect((await through(salesforce, person.sub)).headers.location).toBe('/');
    const user = (await latchkey.deps.store.users.findByEmail(person.email))!;
    expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toMatchObject([{ provider: 'salesforce', uid: '005x0000000UnYmAAK' }]);
  });

  it('google: signs in when the ID token from the token endpoint names the issuer without its scheme, and refuses another issuer', async () => {
    const google = shapeOf('google');
    const provider = providerOf('google');
    const person = google.people.verified;
    await setUp(google);
    // The fixture's issuer is http://127.0.0.1:<port>; its other name, as accounts.google.com is Google's, is 127.0.0.1:<port>.
    provider.idTokenIssuer = provider.issuer.replace(/^http:\/\//, '');
    expect((await through(google, person.sub)).headers.location).toBe('/');
    const user = (await latchkey.deps.store.users.findByEmail(person.email))!;
    expect(await signedInUser()).toBe(user.id);
    expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toMatchObject([{ provider: 'google', uid: person.sub }]);

    for (const other of ['https://issuer.example', `${provider.issuer}.evil.example`]) {
      provider.idTokenIssuer = other;
      const stranger = browser.another();
      expect((await through(google, person.sub, stranger)).headers.location).toBe('/accounts/3rdparty/login/error/');
      expect(await signedInUser(stranger)).toBeFalsy();
    }
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it('google: a headless token login takes an ID token naming either form of the issuer, and refuses another issuer', async () => {
    const google = shapeOf('google');
    const provider = providerOf('google');
    const person = google.people.verified;
    await setUp(google, {}, [{ client_id: MOBILE_CLIENT.id, settings: { ...google.settings(provider.issuer), hidden: true } }]);
    const api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'app', latchkey);
    const login = async (iss: string) => {
      const idToken = await provider.signIdToken({ clientId: MOBILE_CLIENT.id, sub: person.sub, claims: { iss } });
      return api.another().post('/auth/provider/token', { provider: 'google', process: 'login', token: { client_id: MOBILE_CLIENT.id, id_token: idToken } });
    };
    const withScheme = await login(provider.issuer);
    expect(withScheme.status).toBe(200);
    expect(withScheme.body.data.user).toMatchObject({ email: person.email });
    const withoutScheme = await login(provider.issuer.replace(/^http:\/\//, ''));
    expect(withoutScheme.status).toBe(200);
    expect(withoutScheme.body.data.user).toMatchObject({ email: person.email });
    for (const other of ['https://issuer.example', `${provider.issuer}/elsewhere`]) {
      expect((await login(other)).status).toBe(400);
    }
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it('endpoint overrides: an app that replaces each endpoint is sent, and sends, to those and not to the discovered ones', async () => {
    const okta = shapeOf('okta');
    const provider = providerOf('okta');
    const routes = okta.server.routes!;
    const gateway = await startEndpointGateway({ origin: provider.issuer, authorizationEndpoint: `${provider.issuer}${routes.authorization}` });
    try {
      await setUp(okta, {
        authorize_url: `${gateway.origin}/authorize`,
        access_token_url: `${gateway.origin}/token${routes.token}`,
        profile_url: `${gateway.origin}/userinfo${routes.userinfo}`,
        jwks_url: `${gateway.origin}/keys${routes.jwks}`,
      });
      const person = okta.people.verified;
      const atGateway = async (authorizationUrl: string): Promise<string> => {
        expect(authorizationUrl.startsWith(`${gateway.origin}/authorize?`)).toBe(true);
        const answer = await fetch(authorizationUrl, { redirect: 'manual' });
        expect(answer.status).toBe(302);
        return answer.headers.get('location')!;
      };
      expect((await through(okta, person.sub, browser, atGateway)).headers.location).toBe('/');
      expect(gateway.asked).toEqual(['/authorize', `/token${routes.token}`, `/keys${routes.jwks}`, `/userinfo${routes.userinfo}`]);
      const user = (await latchkey.deps.store.users.findByEmail(person.email))!;
      expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toMatchObject([{ provider: 'okta', uid: person.sub }]);
    } finally {
      await gateway.close();
    }
  });
});
