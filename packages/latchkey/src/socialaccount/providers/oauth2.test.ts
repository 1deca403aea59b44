import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { isLatchkeyError } from '../../core/errors.js';
import { startFixtureOAuth2Server, type FixtureOAuth2Server } from '../../testing/fixture-oauth2-server.js';
import { UID_MAX_LENGTH } from '../model.js';
import { oauth2Provider, type OAuth2ProviderDescription } from './oauth2.js';
import { isVouchedFor, textOf } from './profile-fields.js';
import { ProviderError, type ProviderEmail, type ProviderHttp, type RedirectProvider } from './provider.js';

const redirectUri = 'http://127.0.0.1:9/accounts/fixture/login/callback/';
const http: ProviderHttp = { timeoutSeconds: 5 };

let fixture: FixtureOAuth2Server;
beforeAll(async () => {
  fixture = await startFixtureOAuth2Server();
});
afterAll(() => fixture?.close());
beforeEach(() => fixture.reset());

/** A GitHub-shaped description pointed at the fixture. */
function fixtureDescription(overrides: Partial<OAuth2ProviderDescription> = {}): OAuth2ProviderDescription {
  return {
    type: 'fixture',
    authorizeUrl: fixture.authorizeUrl,
    accessTokenUrl: fixture.accessTokenUrl,
    profileUrl: fixture.profileUrl,
    defaultScope: ['read:user', 'user:email'],
    profile: (json) => {
      const email = textOf(json.email);
      return {
        uid: json.id,
        emails: email === undefined ? [] : [{ email, verified: isVouchedFor(json.email_verified), primary: true }],
        data: { email, username: textOf(json.login), name: textOf(json.name) },
      };
    },
    ...overrides,
  };
}

function fixtureProvider(
  options: { description?: Partial<OAuth2ProviderDescription>; settings?: Record<string, unknown>; http?: ProviderHttp; clock?: ManualClock } = {},
): RedirectProvider {
  const app = { id: 'fixture', name: 'Fixture', clientId: fixture.clientId, secret: fixture.config.clientSecret, settings: options.settings ?? {} };
  return oauth2Provider(app, options.http ?? http, fixtureDescription(options.description), options.clock);
}

/** The whole redirect flow: the authorization URL, the browser at the fixture, the callback. */
async function signIn(provider: RedirectProvider, options: { deny?: boolean } = {}) {
  const state = `state-${Math.random().toString(36).slice(2)}`;
  const { url, pending } = await provider.authorizationUrl({ redirectUri, state });
  const callbackUrl = await fixture.authorize(url, options);
  return provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: state, pending });
}

/** The ProviderError a promise rejects with (failing the test if it resolves or throws anything else). */
async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const error: unknown = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

const requestsTo = (path: string) => fixture.requests.filter((request) => request.path === path);

describe('oauth2Provider: a sign-in that goes right', () => {
  it('sends the browser with the app’s parameters and no PKCE by default, and maps the profile', async () => {
    const clock = new ManualClock('2031-05-01T12:00:00Z');
    const provider = fixtureProvider({ clock });
    expect(await provider.authorizationOrigin()).toBe(new URL(fixture.authorizeUrl).origin);
    const { url, pending } = await provider.authorizationUrl({ redirectUri, state: 'the-state' });
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: fixture.clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'read:user user:email',
      state: 'the-state',
    });
    expect(pending).toEqual({});

    const callbackUrl = await fixture.authorize(url);
    const { profile, tokens } = await provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: 'the-state', pending });
    expect(profile).toEqual({
      uid: '4242',
      emails: [{ email: 'ada@example.com', verified: false, primary: true }],
      data: { email: 'ada@example.com', username: 'ada', name: 'Ada Lovelace' },
      extraData: { id: 4242, login: 'ada', name: 'Ada Lovelace', email: 'ada@example.com' },
    });
    expect(tokens.accessToken).toMatch(/^[0-9a-f]{40}$/);
    expect(tokens.refreshToken).toMatch(/^[0-9a-f]{40}$/);
    expect(tokens.expiresAt).toEqual(new Date('2031-05-01T13:00:00Z'));
  });

  it('authenticates with client_secret_post: the secret in the body, no Authorization header', async () => {
    await signIn(fixtureProvider());
    const [token] = requestsTo('/token');
    expect(token!.headers.authorization).toBeUndefined();
    expect(Object.fromEntries(token!.body)).toEqual({
      grant_type: 'authorization_code',
      code: expect.stringMatching(/^[0-9a-f]{32}$/) as unknown,
      redirect_uri: redirectUri,
      client_id: fixture.clientId,
      client_secret: fixture.config.clientSecret,
    });
  });

  it('authenticates with client_secret_basic, form-encoding a secret with reserved characters', async () => {
    fixture.config.clientAuthentication = 'client_secret_basic';
    fixture.config.clientSecret = 'se:cr et/+%ü';
    const { profile } = await signIn(fixtureProvider({ description: { clientAuthentication: 'client_secret_basic' } }));
    expect(profile.uid).toBe('4242');
    const [token] = requestsTo('/token');
    expect(token!.headers.authorization).toMatch(/^Basic /);
    expect(token!.body.has('client_secret')).toBe(false);
  });

  it('reads form-encoded token answers, and asks for JSON so that GitHub gives it', async () => {
    fixture.config.tokenFormat = 'form';
    const clock = new ManualClock('2031-05-01T12:00:00Z');
    const fromForm = await signIn(fixtureProvider({ clock }));
    expect(fromForm.profile.uid).toBe('4242');
    expect(fromForm.tokens.expiresAt).toEqual(new Date('2031-05-01T13:00:00Z'));

    fixture.config.tokenFormat = 'form-unless-json-accepted';
    expect((await signIn(fixtureProvider())).profile.uid).toBe('4242');
    expect(requestsTo('/token').map((request) => request.headers.accept)).toEqual(['application/json', 'application/json']);
  });

  it('sends the access token as a Bearer header, never in the URL', async () => {
    const { tokens } = await signIn(fixtureProvider());
    const [user] = requestsTo('/user');
    expect(user!.headers.authorization).toBe(`Bearer ${tokens.accessToken}`);
    expect([...user!.query.keys()]).toEqual([]);
  });

  it('reads a profile spread over several requests through fetchProfile, an optional one allowed to 404', async () => {
    const description: Partial<OAuth2ProviderDescription> = {
      profileUrl: undefined,
      profileHeaders: { accept: 'application/vnd.github+json' },
      fetchProfile: async ({ requests }) => {
        const user = (await requests.getJson(fixture.profileUrl)) as Record<string, unknown>;
        const emails = await requests.getJson(fixture.emailsUrl, { optional: true });
        return { ...user, emails: emails ?? [] };
      },
      profile: (json) => ({
        uid: json.id,
        emails: (json.emails as { email: string; verified: unknown; primary: unknown }[]).map(
          (entry): ProviderEmail => ({ email: entry.email, verified: isVouchedFor(entry.verified), primary: entry.primary === true }),
        ),
        data: { username: textOf(json.login) },
      }),
    };
    fixture.config.emails = [
      { email: 'ada@example.com', verified: true, primary: true },
      { email: 'ada@old.example', verified: 'TRUE', primary: false },
    ];
    const { profile } = await signIn(fixtureProvider({ description }));
    expect(profile.emails).toEqual([
      { email: 'ada@example.com', verified: true, primary: true },
      { email: 'ada@old.example', verified: false, primary: false },
    ]);
    expect(requestsTo('/user/emails')[0]!.headers.accept).toBe('application/vnd.github+json');

    fixture.config.emails = undefined;
    expect((await signIn(fixtureProvider({ description }))).profile.emails).toEqual([]);
  });

  it('accepts a uid exactly UID_MAX_LENGTH long, and a string one as it is', async () => {
    fixture.config.user = { id: 'u'.repeat(UID_MAX_LENGTH) };
    expect((await signIn(fixtureProvider())).profile.uid).toHaveLength(UID_MAX_LENGTH);
  });

  it('takes only true and "true" as vouching for an address', () => {
    expect([true, 'true', false, 'false', 'TRUE', 1, 'yes', null, undefined].map(isVouchedFor)).toEqual([true, true, false, false, false, false, false, false, false]);
  });
});

describe('oauth2Provider: PKCE, scopes and parameters from the app', () => {
  it('uses PKCE S256 when the provider defaults to it, and the fixture checks the verifier', async () => {
    fixture.config.requirePkce = true;
    const provider = fixtureProvider({ description: { pkceEnabledDefault: true } });
    const { url, pending } = await provider.authorizationUrl({ redirectUri, state: 's' });
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(pending.codeVerifier).toMatch(/^[\w-]{43,128}$/);
    const callbackUrl = await fixture.authorize(url);
    expect((await provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: 's', pending })).profile.uid).toBe('4242');
    expect(requestsTo('/token')[0]!.body.get('code_verifier')).toBe(pending.codeVerifier);
  });

  it('follows settings.oauth_pkce_enabled over the provider’s default, both ways', async () => {
    const on = await fixtureProvider({ settings: { oauth_pkce_enabled: true } }).authorizationUrl({ redirectUri, state: 's' });
    expect(on.url.searchParams.has('code_challenge')).toBe(true);
    const off = await fixtureProvider({ description: { pkceEnabledDefault: true }, settings: { oauth_pkce_enabled: false } }).authorizationUrl({ redirectUri, state: 's' });
    expect(off.url.searchParams.has('code_challenge')).toBe(false);
    expect(off.pending).toEqual({});
  });

  it('refuses to finish without the saved verifier, and the fixture refuses another sign-in’s verifier', async () => {
    const provider = fixtureProvider({ settings: { oauth_pkce_enabled: true } });
    const first = await provider.authorizationUrl({ redirectUri, state: 's' });
    const second = await provider.authorizationUrl({ redirectUri, state: 's' });
    const callbackUrl = await fixture.authorize(first.url);
    const missing = await providerError(provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: 's', pending: {} }));
    expect(missing.message).toMatch(/PKCE verifier is missing/);
    const wrong = await providerError(provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: 's', pending: second.pending }));
    expect(wrong.message).toMatch(/HTTP 400 error=invalid_grant/);
  });

  it('takes settings.scope over the default, appends the sign-in’s extra scope once, and joins with the provider’s delimiter', async () => {
    const provider = fixtureProvider({ description: { scopeDelimiter: ',' }, settings: { scope: ['identify', 'email'] } });
    const { url } = await provider.authorizationUrl({ redirectUri, state: 's', extraScope: ['guilds', 'email'] });
    expect(url.searchParams.get('scope')).toBe('identify,email,guilds');
    const none = await fixtureProvider({ settings: { scope: [] } }).authorizationUrl({ redirectUri, state: 's' });
    expect(none.url.searchParams.has('scope')).toBe(false);
  });

  it('adds settings.auth_params, which cannot replace the parameters that secure the request', async () => {
    const provider = fixtureProvider({ settings: { auth_params: { prompt: 'consent', allow_signup: false, state: 'forged', redirect_uri: 'https://evil.example/', client_id: 'other' } } });
    const { url } = await provider.authorizationUrl({ redirectUri, state: 'mine' });
    expect(url.searchParams.get('prompt')).toBe('consent');
    expect(url.searchParams.get('allow_signup')).toBe('false');
    expect(url.searchParams.getAll('state')).toEqual(['mine']);
    expect(url.searchParams.getAll('redirect_uri')).toEqual([redirectUri]);
    expect(url.searchParams.getAll('client_id')).toEqual([fixture.clientId]);
  });

  it('refuses settings it cannot use, and endpoints off https, naming the app and the setting', () => {
    const refused = (make: () => unknown): string => {
      try {
        make();
      } catch (error) {
        if (isLatchkeyError(error, 'configuration_invalid')) return error.message;
        throw error;
      }
      throw new Error('accepted');
    };
    expect(refused(() => fixtureProvider({ settings: { scope: 'read:user user:email' } }))).toBe(
      'The social app "fixture" has unusable settings: scope must be a list of strings, not a string: write ["read:user","user:email"].',
    );
    expect(refused(() => fixtureProvider({ settings: { auth_params: [['prompt', 'consent']] } }))).toMatch(/: auth_params must be an object of parameters, such as \{"prompt": "login"\}, not a list\.$/);
    expect(refused(() => fixtureProvider({ settings: { auth_params: { prompt: { nested: true } } } }))).toMatch(/: auth_params\.prompt must be a string, not an object\.$/);
    expect(refused(() => fixtureProvider({ settings: { oauth_pkce_enabled: 'yes' } }))).toMatch(/: oauth_pkce_enabled must be true or false, not a string\.$/);
    expect(refused(() => fixtureProvider({ settings: { hidden: 'true' } }))).toMatch(/: hidden must be true or false, not a string\.$/);
    expect(refused(() => fixtureProvider({ description: { accessTokenUrl: 'http://idp.example/token' } }))).toMatch(/accessTokenUrl "http:\/\/idp.example\/token" is not an https URL/);
    expect(refused(() => fixtureProvider({ description: { profileUrl: undefined } }))).toMatch(/neither a profileUrl nor a fetchProfile/);
  });
});

describe('oauth2Provider: callbacks it refuses', () => {
  async function callbackOutcome(edit: (callback: URL) => void, expectedState = 'the-state') {
    const provider = fixtureProvider();
    const { url, pending } = await provider.authorizationUrl({ redirectUri, state: 'the-state' });
    const callbackUrl = await fixture.authorize(url);
    edit(callbackUrl);
    return providerError(provider.completeAuthorization({ callbackUrl, redirectUri, expectedState, pending }));
  }

  it('reports error=access_denied as cancelled', async () => {
    const error = await providerError(signIn(fixtureProvider(), { deny: true }));
    expect(error.reason).toBe('cancelled');
  });

  it('reports any other error, with its description, as failed', async () => {
    const error = await callbackOutcome((callback) => {
      callback.searchParams.delete('code');
      callback.searchParams.set('error', 'server_error');
      callback.searchParams.set('error_description', 'try later');
    });
    expect(error.reason).toBe('failed');
    expect(error.message).toBe('fixture: the provider answered error=server_error (try later)');
  });

  it('refuses a callback without a code', async () => {
    const error = await callbackOutcome((callback) => callback.searchParams.delete('code'));
    expect(error.message).toMatch(/carries no code/);
  });

  it('refuses a state that is not the sign-in’s, missing, or sent twice; even a cancellation', async () => {
    expect((await callbackOutcome(() => undefined, 'another-state')).message).toMatch(/state is not this sign-in's/);
    expect((await callbackOutcome((callback) => callback.searchParams.delete('state'))).message).toMatch(/state is not this sign-in's/);
    expect((await callbackOutcome((callback) => callback.searchParams.append('state', 'the-state'))).message).toMatch(/"state" 2 times/);
    const forgedCancel = await callbackOutcome((callback) => {
      callback.searchParams.set('error', 'access_denied');
      callback.searchParams.set('state', 'guessed');
    });
    expect(forgedCancel.reason).toBe('failed');
  });

  it('has the fixture refuse a replayed code', async () => {
    const provider = fixtureProvider();
    const { url, pending } = await provider.authorizationUrl({ redirectUri, state: 'replay' });
    const callbackUrl = await fixture.authorize(url);
    await provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: 'replay', pending });
    const error = await providerError(provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: 'replay', pending }));
    expect(error.message).toMatch(/answered HTTP 400 error=invalid_grant/);
  });

  it('refuses another redirect_uri than the authorization’s (the fixture checks it)', async () => {
    const provider = fixtureProvider();
    const { url, pending } = await provider.authorizationUrl({ redirectUri, state: 's' });
    const callbackUrl = await fixture.authorize(url);
    const error = await providerError(provider.completeAuthorization({ callbackUrl, redirectUri: 'http://127.0.0.1:9/elsewhere/', expectedState: 's', pending }));
    expect(error.message).toMatch(/invalid_grant/);
  });
});

describe('oauth2Provider: a provider that misbehaves', () => {
  it('names client authentication the token endpoint refused, never showing the secret', async () => {
    fixture.config.clientAuthentication = 'client_secret_basic';
    const error = await providerError(signIn(fixtureProvider()));
    expect(error.message).toMatch(/^fixture: the token endpoint http:\/\/127\.0\.0\.1:\d+\/token answered HTTP 401 error=invalid_client/);
    expect(error.message).not.toContain(fixture.config.clientSecret);
  });

  it.each([
    ['status-500', /answered HTTP 500$/],
    ['garbage', /answered neither JSON nor form-encoded parameters/],
    ['no-access-token', /answered no access_token/],
    ['error-in-200', /answered error=bad_verification_code \(The code passed is incorrect or expired\.\)/],
    ['flood', /larger than 1048576 bytes/],
  ] as const)('refuses a token endpoint answering %s', async (misbehaviour, message) => {
    fixture.config.misbehave.token = misbehaviour;
    const error = await providerError(signIn(fixtureProvider()));
    expect(error.reason).toBe('failed');
    expect(error.message).toMatch(message);
  });

  it.each([
    ['status-500', /profile request to http:\/\/127\.0\.0\.1:\d+\/user answered HTTP 500/],
    ['garbage', /did not answer with JSON/],
    ['missing-id', /the profile has no id/],
    ['huge-uid', /the profile's id is 192 characters long, more than 191/],
    ['redirect', /answered HTTP 302/],
  ] as const)('refuses a profile endpoint answering %s', async (misbehaviour, message) => {
    fixture.config.misbehave.user = misbehaviour;
    const error = await providerError(signIn(fixtureProvider()));
    expect(error.reason).toBe('failed');
    expect(error.message).toMatch(message);
  });

  it('does not follow a profile redirect, so the token goes nowhere else', async () => {
    fixture.config.misbehave.user = 'redirect';
    await providerError(signIn(fixtureProvider()));
    expect(requestsTo('/elsewhere')).toEqual([]);
  });

  it.each(['token', 'user'] as const)('gives up on a %s endpoint that never answers, within the timeout', async (endpoint) => {
    fixture.config.misbehave[endpoint] = 'hang';
    const started = performance.now();
    const error = await providerError(signIn(fixtureProvider({ http: { timeoutSeconds: 1 } })));
    expect(error.reason).toBe('failed');
    expect(error.message).toMatch(/no answer within 1 s \(SOCIALACCOUNT_REQUESTS_TIMEOUT\)/);
    expect(performance.now() - started).toBeLessThan(4000);
  });

  it('names an unreachable token endpoint', async () => {
    const error = await providerError(signIn(fixtureProvider({ description: { accessTokenUrl: 'http://127.0.0.1:9/token' } })));
    expect(error.message).toMatch(/token exchange to http:\/\/127\.0\.0\.1:9\/token failed: fetch failed/);
  });

  it('turns a profile hook that throws into a failed sign-in', async () => {
    const error = await providerError(signIn(fixtureProvider({ description: { profile: (json) => ({ uid: (json.missing as { id: string }).id, emails: [], data: {} }) } })));
    expect(error.message).toMatch(/the profile could not be read/);
    const fromHook = await providerError(signIn(fixtureProvider({ description: { fetchProfile: () => Promise.reject(new TypeError('boom')) } })));
    expect(fromHook.message).toBe('fixture: the profile could not be read: boom');
  });

  it('sends the token to no plain-http host, and lets no description header replace the Bearer one', async () => {
    const remote = await providerError(signIn(fixtureProvider({ description: { fetchProfile: ({ requests }) => requests.getJson('http://api.example/user') as Promise<Record<string, unknown>> } })));
    expect(remote.message).toMatch(/the profile URL "http:\/\/api.example\/user" is not an https URL/);

    const { tokens } = await signIn(fixtureProvider({ description: { profileHeaders: { Authorization: 'token something-else' } } }));
    expect(requestsTo('/user')[0]!.headers.authorization).toBe(`Bearer ${tokens.accessToken}`);
  });

  it('goes through the injected fetch for every request', async () => {
    const seen: string[] = [];
    const watching: typeof fetch = (input, init) => {
      seen.push(new URL(input instanceof Request ? input.url : input).pathname);
      return fetch(input, init);
    };
    await signIn(fixtureProvider({ http: { fetch: watching, timeoutSeconds: 5 } }));
    expect(seen).toEqual(['/token', '/user']);
  });
});
