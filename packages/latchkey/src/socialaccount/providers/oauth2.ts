/**
 * The generic OAuth 2.0 authorization-code provider (RFC 6749 §4.1) that the named providers
 * (GitHub, GitLab, Discord, ...) are descriptions of: where to send the browser, where to trade
 * the code for a token, where to read the profile, and how that profile maps to a person.
 *
 * What it keeps per sign-in is nothing: the caller passes the state in and keeps `pending` (the
 * PKCE verifier) server-side between the redirect and the callback. Every request goes through
 * the injected fetch with the SOCIALACCOUNT_REQUESTS_TIMEOUT, follows no redirect, and reads at
 * most MAX_ANSWER_BYTES, so a provider that hangs, loops or floods cannot hold a sign-in hostage.
 */
import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../../core/clock.js';
import { constantTimeEqual, randomToken } from '../../core/crypto.js';
import { LatchkeyError } from '../../core/errors.js';
import type { ProviderUserData } from '../adapter.js';
import type { ProviderApp } from '../apps.js';
import { UID_MAX_LENGTH } from '../model.js';
import { aBoolean, anEndpoint, aTextList, checkSettings, parameters, readSettings, type SettingProblem, type SettingReader, type SettingsSpec } from './app-settings.js';
import type { ProviderKind } from './kind.js';
import { clip, readJsonObject, readTokenAnswer, requestOnce, type Answer } from './oauth2-requests.js';
import { textOf } from './profile-fields.js';
import { ProviderError, type PendingAuthorization, type ProviderEmail, type ProviderHttp, type ProviderProfile, type ProviderTokens, type RedirectProvider } from './provider.js';
import { SECURE_URL_RULE, secureUrl } from './secure-url.js';

export type ClientAuthentication = 'client_secret_post' | 'client_secret_basic';

/** What a provider's profile hook makes of its JSON; the base checks the uid. */
export interface MappedProfile {
  /** The person's stable id: a non-empty string or an integer (GitHub's ids are numbers). Anything else is refused. */
  uid: unknown;
  emails: ProviderEmail[];
  data: ProviderUserData;
  /** What is kept on the social account; the profile JSON when absent. */
  extraData?: Record<string, unknown>;
}

/** What a provider's fetchProfile is given. */
export interface ProfileInput {
  accessToken: string;
  tokenAnswer: Record<string, unknown>;
  requests: ProfileRequests;
  /** The endpoint placeholders' values (endpointValues), e.g. an API base URL. */
  values: Readonly<Record<string, string>>;
  /** The app's client id and secret, for providers that sign their API calls (Facebook's appsecret_proof). */
  client: { id: string; secret: string };
}

/** GETs on the provider's API with the access token in the Authorization header (RFC 6750 §2.1), never in the URL. */
export interface ProfileRequests {
  /** The JSON answer; throws ProviderError('failed') on a non-2xx status, non-JSON, a timeout. `optional`: a 404 answers undefined. */
  getJson(url: string | URL, options?: { headers?: Record<string, string>; optional?: boolean }): Promise<unknown>;
  /** As getJson, for an API that answers who the token belongs to only to a POST (Dropbox's); `body` is sent as JSON. */
  postJson(url: string | URL, options?: { headers?: Record<string, string>; body?: unknown }): Promise<unknown>;
}

/** A provider, declared: endpoints, scopes, and the mapping of its profile. */
export interface OAuth2ProviderDescription {
  /** The kind's id, the key in SOCIALACCOUNT_PROVIDERS: `github`, `gitlab`, ... */
  type: string;
  authorizeUrl: string;
  accessTokenUrl: string;
  /** Read with the access token; its JSON object is the profile. Give this or fetchProfile. */
  profileUrl?: string;
  /** For providers whose profile takes several requests (GitHub's addresses are a second one). */
  fetchProfile?: (input: ProfileInput) => Promise<Record<string, unknown>>;
  /**
   * The values of the `{name}` placeholders in the endpoints, read from the app's settings: a
   * self-hosted instance's URL (GitLab's `gitlab_url`), a tenant (Microsoft's). The keys it reads
   * are checked by `settingsReaders`, at start-up with the rest.
   */
  endpointValues?: (settings: Readonly<Record<string, unknown>>) => Readonly<Record<string, string>>;
  /** Headers the token request must carry besides the base's (Reddit's User-Agent), from the endpoint values. */
  tokenHeaders?: (values: Readonly<Record<string, string>>) => Readonly<Record<string, string>>;
  /** Readers of the provider's own settings keys (app-settings.ts). */
  settingsReaders?: Readonly<Record<string, SettingReader<unknown>>>;
  /** Sent on every profile request (an API version, a vendor media type). Authorization is always the base's. */
  profileHeaders?: Record<string, string>;
  /** Used unless the app's settings.scope says otherwise. */
  defaultScope: readonly string[];
  /** ' ' (RFC 6749 §3.3) unless the provider wants another (some join with ','). */
  scopeDelimiter?: string;
  /** How the client proves itself at the token endpoint (RFC 6749 §2.3.1); client_secret_post unless said. */
  clientAuthentication?: ClientAuthentication;
  /** PKCE (RFC 7636) unless the app's settings.oauth_pkce_enabled says otherwise; false unless said, as allauth. */
  pkceEnabledDefault?: boolean;
  profile(json: Record<string, unknown>, tokenAnswer: Record<string, unknown>): MappedProfile;
}


/** The parameters that secure the authorization request: an app's auth_params may not replace them. */
const PROTECTED_PARAMS = new Set(['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method']);

/**
 * The app's settings this base reads (lower-case, as allauth's app settings): the scope, extra
 * authorization parameters, PKCE, and any endpoint replaced whole (a fixture server, a proxy).
 */
const OAUTH2_READERS: Readonly<Record<string, SettingReader<unknown>>> = {
  scope: aTextList,
  auth_params: parameters,
  oauth_pkce_enabled: aBoolean,
  authorize_url: anEndpoint,
  access_token_url: anEndpoint,
  profile_url: anEndpoint,
};

function oauth2Settings(description: Pick<OAuth2ProviderDescription, 'settingsReaders'>): SettingsSpec {
  return { readers: { ...OAUTH2_READERS, ...description.settingsReaders } };
}

/**
 * A provider on this base as a kind the registry takes (registry.ts; a project passes it to
 * createLatchkey as one of its socialProviderKinds): the description, and the name forms show.
 * Its apps' settings are checked by the same spec the provider reads them with.
 */
export function oauth2ProviderKind(description: OAuth2ProviderDescription & { name: string }): ProviderKind {
  return {
    id: description.type,
    name: description.name,
    checkSettings: (settings) => checkSettings(description.type, settings, oauth2Settings(description)),
    build: (app, { http, clock }) => oauth2Provider(app, http, description, clock),
  };
}

export function checkOAuth2Settings(type: string, settings: Readonly<Record<string, unknown>>): SettingProblem | undefined {
  return checkSettings(type, settings, oauth2Settings({}));
}

/**
 * A RedirectProvider for one app of a described provider. Throws LatchkeyError('configuration_invalid')
 * for settings it cannot use (a scope that is not a list of strings, an endpoint that is neither
 * https nor loopback http), naming the app and the setting.
 */
export function oauth2Provider(
  app: Pick<ProviderApp, 'id' | 'name' | 'clientId' | 'secret' | 'settings'>,
  http: ProviderHttp,
  description: OAuth2ProviderDescription,
  clock: Clock = systemClock,
): RedirectProvider {
  const read = readSettings(description.type, app, oauth2Settings(description));
  const settings = {
    scope: read.valueOf('scope', aTextList) ?? description.defaultScope,
    authParams: read.valueOf('auth_params', parameters) ?? {},
    pkce: read.valueOf('oauth_pkce_enabled', aBoolean) ?? description.pkceEnabledDefault ?? false,
  };
  const values = description.endpointValues?.(app.settings) ?? {};
  /** An endpoint: the app's own setting when it gives one, else the description's, its placeholders filled. */
  const endpointOf = (name: string, setting: string, template: string): URL => read.valueOf(setting, anEndpoint) ?? endpoint(app.id, name, fillPlaceholders(app.id, template, values));
  const authorizeEndpoint = endpointOf('authorizeUrl', 'authorize_url', description.authorizeUrl);
  const tokenEndpoint = endpointOf('accessTokenUrl', 'access_token_url', description.accessTokenUrl);
  const profileEndpoint = description.profileUrl === undefined ? undefined : endpointOf('profileUrl', 'profile_url', description.profileUrl);
  if (profileEndpoint === undefined && description.fetchProfile === undefined) {
    throw new LatchkeyError('configuration_invalid', `The ${description.type} provider describes neither a profileUrl nor a fetchProfile.`);
  }
  const fail = (message: string) => new ProviderError('failed', `${app.id}: ${message}`);

  async function exchangeCode(code: string, redirectUri: string, codeVerifier: string | undefined): Promise<Record<string, unknown>> {
    const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
    const headers: Record<string, string> = { ...description.tokenHeaders?.(values), accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' };
    if ((description.clientAuthentication ?? 'client_secret_post') === 'client_secret_basic') {
      headers.authorization = basicCredentials(app.clientId, app.secret);
    } else {
      body.set('client_id', app.clientId);
      // A public client has no secret; an empty one is left out rather than sent blank.
      if (app.secret !== '') body.set('client_secret', app.secret);
    }
    if (codeVerifier !== undefined) body.set('code_verifier', codeVerifier);
    const answer = await requestOnce(app.id, 'token exchange', tokenEndpoint, { method: 'POST', headers, body }, http);
    return readTokenAnswer(app.id, answer);
  }

  const requestsWith = (accessToken: string): ProfileRequests => {
    async function request(method: 'GET' | 'POST', url: string | URL, options: { headers?: Record<string, string>; optional?: boolean; body?: unknown }): Promise<unknown> {
      const target = secureUrl(String(url));
      // A bearer token over plain http to a remote host would be readable by anyone on the way.
      if (target === undefined) throw fail(`the profile URL ${JSON.stringify(String(url))} is not an https URL (${SECURE_URL_RULE})`);
      const headers = new Headers({ accept: 'application/json', ...description.profileHeaders, ...options.headers });
      // Set last, whatever the case of a header the description gave: the token goes only here.
      headers.set('authorization', `Bearer ${accessToken}`);
      const init: RequestInit = { method, headers };
      if (method === 'POST') {
        headers.set('content-type', 'application/json');
        init.body = JSON.stringify(options.body ?? null);
      }
      const answer: Answer = await requestOnce(app.id, 'profile request', target, init, http);
      if (answer.status === 404 && options.optional === true) return undefined;
      if (answer.status < 200 || answer.status > 299) throw fail(`profile request to ${answer.where} answered HTTP ${answer.status}`);
      try {
        return JSON.parse(answer.text) as unknown;
      } catch {
        throw fail(`profile request to ${answer.where} did not answer with JSON`);
      }
    }
    return {
      getJson: (url, options = {}) => request('GET', url, options),
      postJson: (url, options = {}) => request('POST', url, options),
    };
  };

  async function fetchProfileJson(accessToken: string, tokenAnswer: Record<string, unknown>): Promise<Record<string, unknown>> {
    const requests = requestsWith(accessToken);
    if (!description.fetchProfile) return readJsonObject(app.id, 'the profile', await requests.getJson(profileEndpoint!));
    try {
      return await description.fetchProfile({ accessToken, tokenAnswer, requests, values, client: { id: app.clientId, secret: app.secret } });
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      throw fail(`the profile could not be read: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  function profileFrom(json: Record<string, unknown>, tokenAnswer: Record<string, unknown>): ProviderProfile {
    let mapped: MappedProfile;
    try {
      mapped = description.profile(json, tokenAnswer);
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      throw fail(`the profile could not be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { uid: checkedUid(app.id, mapped.uid), emails: mapped.emails, data: mapped.data, extraData: mapped.extraData ?? json };
  }

  return {
    protocol: 'oauth2',
    id: app.id,
    type: description.type,
    name: app.name,

    authorizationOrigin() {
      return Promise.resolve(authorizeEndpoint.origin);
    },

    authorizationUrl({ redirectUri, state, extraScope = [] }) {
      const url = new URL(authorizeEndpoint);
      for (const [name, value] of Object.entries(settings.authParams)) {
        if (!PROTECTED_PARAMS.has(name)) url.searchParams.set(name, value);
      }
      const scope = [...new Set([...settings.scope, ...extraScope])].filter((item) => item !== '');
      url.searchParams.set('client_id', app.clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('response_type', 'code');
      // GitHub without QUERY_EMAIL asks for no scope at all: the parameter is then left out.
      if (scope.length > 0) url.searchParams.set('scope', scope.join(description.scopeDelimiter ?? ' '));
      url.searchParams.set('state', state);
      const pending: PendingAuthorization = {};
      if (settings.pkce) {
        // RFC 7636 §4.1: 43 to 128 unreserved characters; 64 random bytes give 86.
        pending.codeVerifier = randomToken(64);
        url.searchParams.set('code_challenge', createHash('sha256').update(pending.codeVerifier, 'ascii').digest('base64url'));
        url.searchParams.set('code_challenge_method', 'S256');
      }
      return Promise.resolve({ url, pending });
    },

    async completeAuthorization({ callbackUrl, redirectUri, expectedState, pending }) {
      const code = readAuthorizationCallback(app.id, callbackUrl, expectedState);
      if (settings.pkce && pending.codeVerifier === undefined) throw fail("the sign-in's saved PKCE verifier is missing");
      const tokenAnswer = await exchangeCode(code, redirectUri, pending.codeVerifier);
      const tokens = tokensFrom(tokenAnswer, clock);
      const profile = profileFrom(await fetchProfileJson(tokens.accessToken, tokenAnswer), tokenAnswer);
      return { profile, tokens };
    },
  };
}

/**
 * The callback's code (RFC 6749 §4.1.2), once its state is this sign-in's (§10.12: checked first,
 * so a forged callback cannot even reach the cancelled page) and the provider reported no error:
 * error=access_denied is ProviderError('cancelled'), anything else ProviderError('failed').
 */
export function readAuthorizationCallback(id: string, callbackUrl: URL, expectedState: string): string {
  const params = callbackUrl.searchParams;
  const state = single(id, params, 'state');
  if (state === undefined || expectedState === '' || !constantTimeEqual(state, expectedState)) {
    throw new ProviderError('failed', `${id}: the callback's state is not this sign-in's (forged, replayed, or from another browser)`);
  }
  const error = single(id, params, 'error');
  if (error === 'access_denied') throw new ProviderError('cancelled', `${id}: the person declined at the provider`);
  if (error !== undefined) {
    const description = single(id, params, 'error_description');
    throw new ProviderError('failed', `${id}: the provider answered error=${clip(error)} (${description === undefined ? 'no description' : clip(description)})`);
  }
  const code = single(id, params, 'code');
  if (code === undefined || code === '') throw new ProviderError('failed', `${id}: the callback carries no code`);
  return code;
}

/** A callback parameter given at most once: sent twice, which copy a check read would be a guess. */
function single(id: string, params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new ProviderError('failed', `${id}: the callback carries "${name}" ${values.length} times`);
  return values[0];
}

function tokensFrom(answer: Record<string, unknown>, clock: Clock): ProviderTokens {
  // A form-encoded answer carries every value as text, expires_in included.
  const expiresIn = typeof answer.expires_in === 'string' && /^\d{1,10}$/.test(answer.expires_in) ? Number(answer.expires_in) : answer.expires_in;
  return {
    accessToken: answer.access_token as string,
    refreshToken: textOf(answer.refresh_token),
    expiresAt: typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(clock.now().getTime() + expiresIn * 1000) : undefined,
    idToken: textOf(answer.id_token),
  };
}

/** allauth's rule: a non-empty string of at most UID_MAX_LENGTH characters; an integer id is taken as its digits. */
export function checkedUid(id: string, uid: unknown): string {
  const text = typeof uid === 'number' && Number.isSafeInteger(uid) ? String(uid) : uid;
  if (typeof text !== 'string' || text === '') throw new ProviderError('failed', `${id}: the profile has no id (a non-empty string or integer)`);
  if (text.length > UID_MAX_LENGTH) throw new ProviderError('failed', `${id}: the profile's id is ${text.length} characters long, more than ${UID_MAX_LENGTH}`);
  return text;
}

/**
 * RFC 6749 §2.3.1: the client id and secret are form-encoded before they are joined and base64'd,
 * so a ':' or a non-ASCII character in either survives the trip.
 */
function basicCredentials(clientId: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`, 'utf8').toString('base64')}`;
}

/** `{name}` placeholders replaced by their values; a placeholder without one is the description's mistake. */
function fillPlaceholders(id: string, template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{([a-z_]+)\}/g, (_whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new LatchkeyError('configuration_invalid', `The social app "${id}": its endpoint ${JSON.stringify(template)} needs a value for {${name}}.`);
    return value.replace(/\/+$/, '');
  });
}

/** An endpoint of the description as a URL; LatchkeyError('configuration_invalid') unless secureUrl takes it. */
function endpoint(id: string, name: string, value: string): URL {
  const url = secureUrl(value);
  if (url === undefined) {
    throw new LatchkeyError('configuration_invalid', `The social app "${id}": its ${name} ${JSON.stringify(value)} is not an https URL (${SECURE_URL_RULE}).`);
  }
  return url;
}
