import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOidcProvider, type TestLogin, type TestOidcProvider } from '../../testing/oidc-provider.js';
import { startHostileOidcServer, type HostileBehaviour, type HostileOidcServer } from '../../testing/hostile-oidc-server.js';
import { UID_MAX_LENGTH } from '../model.js';
import { openIdConnectProvider, type OpenIdConnectSettings } from './openid-connect.js';
import { ProviderError, type ProviderHttp, type RedirectProvider } from './provider.js';

const redirectUri = 'http://127.0.0.1:9/accounts/oidc/test/login/callback/';
const http: ProviderHttp = { timeoutSeconds: 5 };

/** Runs the whole redirect flow: the authorization URL, the browser at the provider, the callback. */
async function signIn(provider: RedirectProvider, follow: (url: URL) => Promise<URL>) {
  const state = randomUUID();
  const { url, pending } = await provider.authorizationUrl({ redirectUri, state });
  const callbackUrl = await follow(url);
  return provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: state, pending });
}

function pathOf(input: string | URL | Request): string {
  return new URL(input instanceof Request ? input.url : input).pathname;
}

/** The ProviderError a promise rejects with (failing the test if it resolves or throws anything else). */
async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const error: unknown = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe('openIdConnectProvider against oidc-provider', () => {
  let op: TestOidcProvider;
  let cognito: TestOidcProvider;

  beforeAll(async () => {
    op = await startTestOidcProvider({
      clients: [
        { client_id: 'basic-client', client_secret: 'basic-secret', redirect_uris: [redirectUri], token_endpoint_auth_method: 'client_secret_basic' },
        { client_id: 'post-client', client_secret: 'post-secret', redirect_uris: [redirectUri], token_endpoint_auth_method: 'client_secret_post' },
      ],
      accounts: [
        {
          sub: 'alice-sub',
          claims: { email: 'alice@example.com', email_verified: true, name: 'Alice Liddell', given_name: 'Alice', family_name: 'Liddell', preferred_username: 'alice' },
        },
      ],
    });
    cognito = await startTestOidcProvider({
      issuerPath: '/us-east-1_AbCdEf123',
      clients: [{ client_id: 'cognito-client', client_secret: 'cognito-secret', redirect_uris: [redirectUri] }],
      accounts: [
        // As Cognito: booleans in the ID token, strings in userinfo.
        { sub: 'carol-sub', claims: { email: 'carol@example.com', email_verified: true }, userinfoClaims: { email_verified: 'true' } },
        { sub: 'dave-sub', claims: { email: 'dave@example.com', email_verified: false }, userinfoClaims: { email_verified: 'false' } },
      ],
    });
  });
  afterAll(async () => {
    await Promise.all([op?.close(), cognito?.close()]);
  });

  function clientApp(clientId: 'basic-client' | 'post-client', settings: Partial<OpenIdConnectSettings> = {}) {
    const secret = clientId === 'basic-client' ? 'basic-secret' : 'post-secret';
    const token_auth_method = clientId === 'basic-client' ? 'client_secret_basic' : 'client_secret_post';
    return { providerId: 'test', name: 'Test', clientId, secret, settings: { server_url: op.issuer, token_auth_method, ...settings } } as const;
  }
  const client = (clientId: 'basic-client' | 'post-client', settings: Partial<OpenIdConnectSettings> = {}) =>
    openIdConnectProvider(clientApp(clientId, settings), http);
  const as = (login: TestLogin) => (url: URL) => op.followAuthorization(url, { as: login });

  it('signs a person in with PKCE and a nonce, and normalises the profile', async () => {
    const provider = client('basic-client');
    const { url } = await provider.authorizationUrl({ redirectUri, state: 'some-state' });
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('nonce')).toMatch(/^[\w-]{20,}$/);
    expect(url.searchParams.get('state')).toBe('some-state');
    expect(url.searchParams.get('scope')).toBe('openid profile email');

    const { profile, tokens } = await signIn(provider, as({ login: 'alice-sub' }));
    expect(profile.uid).toBe('alice-sub');
    expect(profile.emails).toEqual([{ email: 'alice@example.com', verified: true, primary: true }]);
    expect(profile.data).toEqual({ email: 'alice@example.com', username: 'alice', name: 'Alice Liddell', firstName: 'Alice', lastName: 'Liddell' });
    expect(profile.extraData).toMatchObject({ userinfo: { sub: 'alice-sub' }, id_token: { sub: 'alice-sub', aud: 'basic-client', iss: op.issuer } });
    expect(tokens.accessToken).not.toBe('');
    expect(tokens.idToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(tokens.expiresAt).toBeInstanceOf(Date);
  });

  it('authenticates with client_secret_basic or client_secret_post as configured', async () => {
    /** The token request's credentials, seen through the injected fetch. */
    const sent: { authorization: string | null; secretInBody: boolean }[] = [];
    const watching: typeof fetch = (input, init) => {
      if (pathOf(input).endsWith('/token')) {
        sent.push({ authorization: new Headers(init?.headers).get('authorization'), secretInBody: init?.body instanceof URLSearchParams && init.body.has('client_secret') });
      }
      return fetch(input, init);
    };
    const watched = (clientId: 'basic-client' | 'post-client') => openIdConnectProvider(clientApp(clientId), { fetch: watching, timeoutSeconds: 5 });
    expect((await signIn(watched('basic-client'), as({ login: 'alice-sub' }))).profile.uid).toBe('alice-sub');
    expect((await signIn(watched('post-client'), as({ login: 'alice-sub' }))).profile.uid).toBe('alice-sub');
    expect(sent).toEqual([
      { authorization: expect.stringMatching(/^Basic /) as unknown, secretInBody: false },
      { authorization: null, secretInBody: true },
    ]);
  });

  it('takes the profile from the ID token when fetch_userinfo is off', async () => {
    const { profile } = await signIn(client('basic-client', { fetch_userinfo: false }), as({ login: 'alice-sub' }));
    expect(profile.emails).toEqual([{ email: 'alice@example.com', verified: true, primary: true }]);
    expect(profile.extraData.userinfo).toBeUndefined();
  });

  it('reads a Cognito-shaped issuer and its string email_verified strictly', async () => {
    const provider = openIdConnectProvider(
      { providerId: 'cognito', name: 'Cognito', clientId: 'cognito-client', secret: 'cognito-secret', settings: { server_url: cognito.issuer } },
      http,
    );
    expect(new URL(cognito.issuer).pathname).toBe('/us-east-1_AbCdEf123');
    const carol = await signIn(provider, (url) => cognito.followAuthorization(url, { as: { login: 'carol-sub' } }));
    expect(carol.profile.emails).toEqual([{ email: 'carol@example.com', verified: true, primary: true }]);
    expect(carol.profile.extraData).toMatchObject({ userinfo: { email_verified: 'true' }, id_token: { email_verified: true } });
    const dave = await signIn(provider, (url) => cognito.followAuthorization(url, { as: { login: 'dave-sub' } }));
    expect(dave.profile.emails).toEqual([{ email: 'dave@example.com', verified: false, primary: true }]);
  });

  it('refuses a callback whose state is not the sign-in’s', async () => {
    const provider = client('basic-client');
    const { url, pending } = await provider.authorizationUrl({ redirectUri, state: 'the-real-state' });
    const callbackUrl = await op.followAuthorization(url, { as: { login: 'alice-sub' } });
    const error = await providerError(provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: 'another-state', pending }));
    expect(error.reason).toBe('failed');
    expect(error.message).toMatch(/state/);
  });

  it('refuses a replayed code', async () => {
    const provider = client('basic-client');
    const { url, pending } = await provider.authorizationUrl({ redirectUri, state: 'replay' });
    const callbackUrl = await op.followAuthorization(url, { as: { login: 'alice-sub' } });
    await provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: 'replay', pending });
    const error = await providerError(provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: 'replay', pending }));
    expect(error.reason).toBe('failed');
    expect(error.message).toMatch(/invalid_grant/);
  });

  it('reports a refusal at the provider as cancelled', async () => {
    const error = await providerError(signIn(client('basic-client'), as({ deny: true })));
    expect(error.reason).toBe('cancelled');
  });

  it('verifies an ID token the provider issued, and refuses one issued to another client', async () => {
    const provider = client('basic-client');
    const { tokens } = await signIn(provider, as({ login: 'alice-sub' }));
    const profile = await provider.verifyIdToken!(tokens.idToken!);
    expect(profile.uid).toBe('alice-sub');
    expect(profile.emails).toEqual([{ email: 'alice@example.com', verified: true, primary: true }]);

    const other = await signIn(client('post-client'), as({ login: 'alice-sub' }));
    const error = await providerError(provider.verifyIdToken!(other.tokens.idToken!));
    expect(error.reason).toBe('failed');
    expect(error.message).toMatch(/aud/);
  });
});

describe('openIdConnectProvider against a hostile provider', () => {
  let hostile: HostileOidcServer;
  beforeAll(async () => {
    hostile = await startHostileOidcServer();
  });
  afterAll(async () => {
    await hostile?.close();
  });

  /** A fresh provider (so no discovery is cached from another test) against the hostile server behaving so. */
  function against(behaviour: HostileBehaviour, settings: Partial<OpenIdConnectSettings> = {}, providerHttp: ProviderHttp = http) {
    hostile.behaviour = behaviour;
    return openIdConnectProvider(
      { providerId: 'hostile', name: 'Hostile', clientId: hostile.clientId, secret: hostile.clientSecret, settings: { server_url: hostile.issuer, ...settings } },
      providerHttp,
    );
  }
  const follow = (url: URL) => hostile.followAuthorization(url);

  it('accepts a well-behaved answer, with every request through the injected fetch', async () => {
    const seen: string[] = [];
    const countingFetch: typeof fetch = (input, init) => {
      seen.push(pathOf(input));
      return fetch(input, init);
    };
    const { profile } = await signIn(against({}, {}, { fetch: countingFetch, timeoutSeconds: 5 }), follow);
    expect(profile.uid).toBe('hostile-user');
    expect(profile.emails).toEqual([{ email: 'mallory@example.com', verified: true, primary: true }]);
    expect(seen).toEqual(['/.well-known/openid-configuration', '/token', '/jwks', '/userinfo']);
  });

  const now = () => Math.floor(Date.now() / 1000);
  const badIdTokens: [string, HostileBehaviour][] = [
    ['another issuer', { idTokenClaims: (claims) => ({ ...claims, iss: 'https://evil.example' }) }],
    ['another audience', { idTokenClaims: (claims) => ({ ...claims, aud: 'someone-else' }) }],
    ['an expired token', { idTokenClaims: (claims) => ({ ...claims, iat: now() - 7200, exp: now() - 3600 }) }],
    ['another nonce', { idTokenClaims: (claims) => ({ ...claims, nonce: 'not-the-one-sent' }) }],
    ['no nonce', { idTokenClaims: ({ nonce: _nonce, ...claims }) => claims }],
    ['alg none', { idTokenSigning: 'none' }],
    ['HS256 signed with the client secret', { idTokenSigning: 'HS256-client-secret' }],
  ];
  it.each(badIdTokens)('refuses an ID token with %s', async (_case, behaviour) => {
    expect((await providerError(signIn(against(behaviour), follow))).reason).toBe('failed');
  });

  it.each(badIdTokens.filter(([name]) => !name.includes('nonce')))('refuses %s in headless token login', async (_case, behaviour) => {
    const provider = against(behaviour);
    expect((await providerError(provider.verifyIdToken!(await hostile.mintIdToken()))).reason).toBe('failed');
  });

  it('accepts a good ID token in headless token login', async () => {
    const provider = against({});
    expect((await provider.verifyIdToken!(await hostile.mintIdToken())).uid).toBe('hostile-user');
  });

  it('gives up on a token endpoint that never answers, within the timeout', async () => {
    const error = await providerError(signIn(against({ token: 'hang' }, {}, { timeoutSeconds: 1 }), follow));
    expect(error.reason).toBe('failed');
    expect(error.message).toMatch(/no answer within 1 s/);
  });

  it('refuses garbage JSON from the token endpoint, userinfo and discovery', async () => {
    expect((await providerError(signIn(against({ token: 'garbage' }), follow))).reason).toBe('failed');
    expect((await providerError(signIn(against({ userinfo: () => '{"sub": ' }), follow))).reason).toBe('failed');
    const discovery = await providerError(signIn(against({ discovery: () => '<html>not json</html>' }), follow));
    expect(discovery.message).toMatch(/did not answer with JSON/);
  });

  it('refuses a userinfo about someone else', async () => {
    const error = await providerError(signIn(against({ userinfo: (claims) => ({ ...claims, sub: 'someone-else' }) }), follow));
    expect(error.reason).toBe('failed');
  });

  it('refuses a uid longer than UID_MAX_LENGTH and accepts one exactly that long', async () => {
    const withSub = (sub: string): HostileBehaviour => ({ idTokenClaims: (claims) => ({ ...claims, sub }) });
    const error = await providerError(signIn(against(withSub('u'.repeat(UID_MAX_LENGTH + 1))), follow));
    expect(error.message).toMatch(/"sub" claim/);
    expect((await signIn(against(withSub('u'.repeat(UID_MAX_LENGTH))), follow)).profile.uid).toHaveLength(UID_MAX_LENGTH);
  });

  it('takes email_verified "false" (and anything but true or "true") as unverified', async () => {
    for (const value of ['false', 'TRUE', 1, 'yes', null]) {
      const { profile } = await signIn(against({ userinfo: (claims) => ({ ...claims, email_verified: value }) }), follow);
      expect(profile.emails).toEqual([{ email: 'mallory@example.com', verified: false, primary: true }]);
    }
  });

  it('explains a server_url on the Cognito hosted-UI domain', async () => {
    const notFound: typeof fetch = () => Promise.resolve(new Response('Not found', { status: 404 }));
    const provider = openIdConnectProvider(
      { providerId: 'cognito', name: 'Cognito', clientId: 'c', secret: 's', settings: { server_url: 'https://x.auth.us-east-1.amazoncognito.com' } },
      { fetch: notFound, timeoutSeconds: 1 },
    );
    const error = await providerError(provider.authorizationUrl({ redirectUri, state: 's' }));
    expect(error.message).toMatch(/HTTP 404/);
    expect(error.message).toContain('https://cognito-idp.us-east-1.amazonaws.com/<user pool id>');
  });

  it('explains a multi-tenant Microsoft Entra server_url', async () => {
    const provider = against({ discovery: (document) => ({ ...document, issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0' }) });
    const error = await providerError(provider.authorizationUrl({ redirectUri, state: 's' }));
    expect(error.message).toMatch(/tenant/);
    expect(error.message).toContain('https://login.microsoftonline.com/<tenant id>/v2.0');
  });

  it('refuses discovery naming another issuer, an unreachable one, and plain http off loopback', async () => {
    const mismatch = await providerError(against({ discovery: (document) => ({ ...document, issuer: 'https://elsewhere.example' }) }).authorizationUrl({ redirectUri, state: 's' }));
    expect(mismatch.message).toMatch(/names issuer https:\/\/elsewhere.example/);
    const unreachable = await providerError(against({}, { server_url: 'http://127.0.0.1:9' }).authorizationUrl({ redirectUri, state: 's' }));
    expect(unreachable.message).toMatch(/unreachable/);
    const plainHttp = await providerError(against({}, { server_url: 'http://idp.example' }).authorizationUrl({ redirectUri, state: 's' }));
    expect(plainHttp.message).toMatch(/not an https URL/);
  });

  it('keeps auth_params from replacing the parameters that secure the request', async () => {
    const provider = against({}, { auth_params: { prompt: 'login', state: 'forged', redirect_uri: 'https://evil.example' } });
    const { url } = await provider.authorizationUrl({ redirectUri, state: 'mine', extraScope: ['offline_access', 'email'] });
    expect(url.searchParams.get('prompt')).toBe('login');
    expect(url.searchParams.get('state')).toBe('mine');
    expect(url.searchParams.get('redirect_uri')).toBe(redirectUri);
    expect(url.searchParams.get('scope')).toBe('openid profile email offline_access');
  });
});
