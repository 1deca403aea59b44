/**
 * The OpenID Connect provider against a provider that misbehaves on request
 * (testing/hostile-oidc-server.ts): forged and wrong ID tokens, garbage, hangs, a userinfo about
 * someone else, mistaken server URLs. Each is refused as a failed sign-in, never accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { startHostileOidcServer, type HostileBehaviour, type HostileOidcServer } from '../../testing/hostile-oidc-server.js';
import { configurationError, pathOf, providerError, signInThrough } from '../../testing/provider-outcomes.js';
import { UID_MAX_LENGTH } from '../model.js';
import { openIdConnectProvider, type OpenIdConnectSettings } from './openid-connect.js';
import type { ProviderHttp, RedirectProvider } from './provider.js';

const redirectUri = 'http://127.0.0.1:9/accounts/oidc/test/login/callback/';
const http: ProviderHttp = { timeoutSeconds: 5 };
const signIn = (provider: RedirectProvider, follow: (url: URL) => Promise<URL>) => signInThrough(provider, redirectUri, follow);
const HOUR = 60 * 60 * 1000;
const DAY_SECONDS = 24 * 60 * 60;

describe('openIdConnectProvider against a hostile provider', () => {
  let hostile: HostileOidcServer;
  /** The site's clock, which the provider issues its tokens on too: only the test moves it. */
  const clock = new ManualClock();
  beforeAll(async () => {
    hostile = await startHostileOidcServer();
    hostile.clock = clock;
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
      clock,
    );
  }
  const follow = (url: URL) => hostile.followAuthorization(url);

  it('accepts a well-behaved answer, with every request through the injected fetch', async () => {
    const seen: string[] = [];
    const countingFetch: typeof fetch = (input, init) => {
      seen.push(pathOf(input));
      return fetch(input, init);
    };
    const { profile, tokens } = await signIn(against({}, {}, { fetch: countingFetch, timeoutSeconds: 5 }), follow);
    expect(profile.uid).toBe('hostile-user');
    // The access token's expiry (expires_in: 300) is kept on the site's clock.
    expect(tokens.expiresAt).toEqual(new Date(clock.now().getTime() + 300 * 1000));
    expect(profile.emails).toEqual([{ email: 'mallory@example.com', verified: true, primary: true }]);
    expect(seen).toEqual(['/.well-known/openid-configuration', '/token', '/jwks', '/userinfo']);
  });

  const badIdTokens: [string, HostileBehaviour][] = [
    ['another issuer', { idTokenClaims: (claims) => ({ ...claims, iss: 'https://evil.example' }) }],
    ['another audience', { idTokenClaims: (claims) => ({ ...claims, aud: 'someone-else' }) }],
    ['another nonce', { idTokenClaims: (claims) => ({ ...claims, nonce: 'not-the-one-sent' }) }],
    ['no nonce', { idTokenClaims: ({ nonce: _nonce, ...claims }) => claims }],
    ['alg none', { idTokenSigning: 'none' }],
    ['HS256 signed with the client secret', { idTokenSigning: 'HS256-client-secret' }],
    ['an iat a day in the future', { idTokenIssuedAhead: DAY_SECONDS }],
    ['an iat two minutes in the future', { idTokenIssuedAhead: 120 }],
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

  it('says which claim refused a token dated in the future, and accepts one within the clock skew (30 seconds)', async () => {
    const future: HostileBehaviour = { idTokenIssuedAhead: DAY_SECONDS };
    expect((await providerError(signIn(against(future), follow))).message).toMatch(/"iat"/);
    expect((await providerError(against(future).verifyIdToken!(await hostile.mintIdToken()))).message).toMatch(/"iat"/);
    const withinSkew: HostileBehaviour = { idTokenIssuedAhead: 30 };
    expect((await signIn(against(withinSkew), follow)).profile.uid).toBe('hostile-user');
    expect((await against(withinSkew).verifyIdToken!(await hostile.mintIdToken())).uid).toBe('hostile-user');
  });

  it("refuses an ID token past its expiry on the site's clock, however the wall clock reads it", async () => {
    // The provider answers at the token endpoint; the site's clock moves an hour on before the
    // answer is checked, past the token's exp (ten minutes after it was issued).
    const late: HostileBehaviour = {
      idTokenClaims: (claims) => {
        clock.advance(HOUR);
        return claims;
      },
    };
    expect((await providerError(signIn(against(late), follow))).message).toMatch(/"exp"/);

    // Headless token login: good when issued, refused once the clock has moved past exp.
    const provider = against({});
    const token = await hostile.mintIdToken();
    expect((await provider.verifyIdToken!(token)).uid).toBe('hostile-user');
    clock.advance(HOUR);
    expect((await providerError(provider.verifyIdToken!(token))).message).toMatch(/"exp"/);
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
    // Plain http off loopback is refused before any request, as the app's settings are checked.
    const plainHttp = configurationError(() => against({}, { server_url: 'http://idp.example' }));
    expect(plainHttp).toBe('The social app "hostile" has unusable settings: server_url "http://idp.example" is not an https URL (plain http is allowed on 127.0.0.1, [::1] and localhost only).');
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
