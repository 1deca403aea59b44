/**
 * The OpenID Connect provider against a real one (panva's oidc-provider on loopback): the sign-in,
 * client authentication, the settings that shape it (uid_field, oauth_pkce_enabled, scope,
 * fetch_userinfo, endpoints that replace discovery's), a Cognito-shaped issuer, and token login. What a hostile provider may send is
 * openid-connect.security.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOidcProvider, type TestLogin, type TestOidcProvider } from '../../testing/oidc-provider.js';
import { configurationError, pathOf, providerError, signInThrough } from '../../testing/provider-outcomes.js';
import { startEndpointGateway } from '../../testing/providers/oidc-shapes.js';
import { openIdConnectProvider, type OpenIdConnectSettings } from './openid-connect.js';
import type { ProviderHttp, RedirectProvider } from './provider.js';

const redirectUri = 'http://127.0.0.1:9/accounts/oidc/test/login/callback/';
const http: ProviderHttp = { timeoutSeconds: 5 };
const signIn = (provider: RedirectProvider, follow: (url: URL) => Promise<URL>) => signInThrough(provider, redirectUri, follow);

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

  it('identifies the person by the uid_field claim, from userinfo, the ID token and in token login', async () => {
    const fromUserinfo = await signIn(client('basic-client', { uid_field: 'preferred_username' }), as({ login: 'alice-sub' }));
    expect(fromUserinfo.profile.uid).toBe('alice');
    const fromIdToken = client('basic-client', { uid_field: 'preferred_username', fetch_userinfo: false });
    const signedIn = await signIn(fromIdToken, as({ login: 'alice-sub' }));
    expect(signedIn.profile.uid).toBe('alice');
    expect((await fromIdToken.verifyIdToken!(signedIn.tokens.idToken!)).uid).toBe('alice');
    // A claim the provider does not send identifies no one: the sign-in fails rather than falling back to `sub`.
    const missing = await providerError(signIn(client('basic-client', { uid_field: 'employee_number' }), as({ login: 'alice-sub' })));
    expect(missing.reason).toBe('failed');
    expect(missing.message).toBe('test: the "employee_number" claim is not a non-empty string of at most 191 characters');
  });

  it('sends no code_challenge, and no code_verifier, with oauth_pkce_enabled false', async () => {
    /** The token requests' bodies, seen through the injected fetch. */
    const tokenRequests: URLSearchParams[] = [];
    const watching: typeof fetch = (input, init) => {
      if (pathOf(input).endsWith('/token') && init?.body instanceof URLSearchParams) tokenRequests.push(new URLSearchParams(init.body));
      return fetch(input, init);
    };
    const watched = (settings: Partial<OpenIdConnectSettings>) => openIdConnectProvider(clientApp('post-client', settings), { fetch: watching, timeoutSeconds: 5 });

    const withoutPkce = watched({ oauth_pkce_enabled: false });
    const { url, pending } = await withoutPkce.authorizationUrl({ redirectUri, state: 'no-pkce' });
    expect(url.searchParams.has('code_challenge')).toBe(false);
    expect(url.searchParams.has('code_challenge_method')).toBe(false);
    expect(pending.codeVerifier).toBeUndefined();
    expect(url.searchParams.get('nonce')).toBe(pending.nonce);
    const callbackUrl = await op.followAuthorization(url, { as: { login: 'alice-sub' } });
    expect((await withoutPkce.completeAuthorization({ callbackUrl, redirectUri, expectedState: 'no-pkce', pending })).profile.uid).toBe('alice-sub');

    // The default, for contrast: the verifier goes with the code.
    expect((await signIn(watched({}), as({ login: 'alice-sub' }))).profile.uid).toBe('alice-sub');
    expect(tokenRequests.map((body) => body.has('code_verifier'))).toEqual([false, true]);
  });

  it('asks for the scope of the settings as given, and the provider grants only that', async () => {
    const provider = client('basic-client', { scope: ['openid', 'email'] });
    const { url } = await provider.authorizationUrl({ redirectUri, state: 's' });
    expect(url.searchParams.get('scope')).toBe('openid email');
    const { profile } = await signIn(provider, as({ login: 'alice-sub' }));
    expect(profile.emails).toEqual([{ email: 'alice@example.com', verified: true, primary: true }]);
    // Without `profile`, the provider released no name: the scope reached it as written.
    expect(profile.data).toEqual({ email: 'alice@example.com' });
    expect(profile.extraData.userinfo).toEqual({ sub: 'alice-sub', email: 'alice@example.com', email_verified: true });
  });

  it('sends the person, and the code exchange, to the endpoints its settings replace, discovery giving the rest', async () => {
    // oidc-provider's own paths (/auth, /token) at the issuer; the gateway forwards /token/token to its /token.
    const gateway = await startEndpointGateway({ origin: op.issuer, authorizationEndpoint: `${op.issuer}/auth` });
    try {
      const provider = client('basic-client', { authorize_url: `${gateway.origin}/authorize`, access_token_url: `${gateway.origin}/token/token` });
      expect(await provider.authorizationOrigin()).toBe(gateway.origin);
      const { profile } = await signIn(provider, async (url) => {
        expect(`${url.origin}${url.pathname}`).toBe(`${gateway.origin}/authorize`);
        const atProvider = (await fetch(url, { redirect: 'manual' })).headers.get('location')!;
        return op.followAuthorization(atProvider, { as: { login: 'alice-sub' } });
      });
      expect(profile.uid).toBe('alice-sub');
      // The keys and userinfo were not replaced: discovery's were asked, not the gateway.
      expect(gateway.asked).toEqual(['/authorize', '/token/token']);
    } finally {
      await gateway.close();
    }
  });

  it('refuses settings it cannot use when it is built, naming the app and the key', () => {
    const built = (settings: Record<string, unknown>) => () => openIdConnectProvider({ ...clientApp('basic-client'), settings: { server_url: op.issuer, ...settings } }, http);
    expect(configurationError(built({ scope: 'openid email' }))).toBe(
      'The social app "test" has unusable settings: scope must be a list of strings, not a string: write ["openid","email"].',
    );
    expect(configurationError(built({ uid_field: '' }))).toMatch(/: uid_field must be a non-empty string, not an empty one\.$/);
    expect(configurationError(built({ token_auth_method: 'private_key_jwt' }))).toMatch(/: token_auth_method must be one of "client_secret_basic", "client_secret_post", not "private_key_jwt"\.$/);
    expect(configurationError(built({ access_token_url: 'http://proxy.example/token' }))).toMatch(/: access_token_url "http:\/\/proxy\.example\/token" is not an https URL \(plain http is allowed on 127\.0\.0\.1, \[::1\] and localhost only\)\.$/);
    expect(configurationError(() => openIdConnectProvider({ ...clientApp('basic-client'), settings: {} }, http))).toBe(
      'The social app "test" has unusable settings: a server_url is required for openid_connect (the identity provider\'s issuer URL).',
    );
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
