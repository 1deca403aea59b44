/**
 * Sign in with Apple, as Apple's REST API documents it
 * (https://developer.apple.com/documentation/sign_in_with_apple/sign_in_with_apple_rest_api):
 * the browser goes to /auth/authorize, Apple POSTs the answer back (response_mode=form_post, so
 * the callback is parked and finished by a same-site GET: formPostCallback), the code is traded
 * at /auth/token with a client secret Latchkey signs (apple-tokens.ts), and the person is the ID
 * token that answer carries, its signature always checked against Apple's keys.
 *
 * response_type is `code` alone: the ID token used is the token endpoint's, fetched by Latchkey
 * itself with its client secret; the one `code id_token` would add to the browser's POST is
 * never needed, so it is not asked for (and nothing unverified from the browser is read but the
 * name in `user`, which Apple sends nowhere else).
 */
import type { KeyObject } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { Clock } from '../../../core/clock.js';
import { LatchkeyError } from '../../../core/errors.js';
import type { ProviderApp } from '../../apps.js';
import { anEndpoint, aTextList, parameters, readSettings, type SettingsSpec } from '../app-settings.js';
import { checkedUid, readAuthorizationCallback } from '../oauth2.js';
import { readTokenAnswer, requestOnce } from '../oauth2-requests.js';
import { isVouchedFor, textOf } from '../profile-fields.js';
import { ProviderError, type ProviderEmail, type ProviderHttp, type ProviderProfile, type RedirectProvider } from '../provider.js';
import { aSigningKey, appleClientSecret, appleIdTokenVerifier } from './apple-tokens.js';

export const APPLE_ENDPOINTS = {
  authorize_url: 'https://appleid.apple.com/auth/authorize',
  access_token_url: 'https://appleid.apple.com/auth/token',
  keys_url: 'https://appleid.apple.com/auth/keys',
} as const;

/** allauth's default: the name (sent once, on the first authorisation) and the address. */
const DEFAULT_SCOPE = ['name', 'email'];

/** Parameters that secure or shape the request: auth_params may not replace them. */
const PROTECTED_PARAMS = new Set(['client_id', 'redirect_uri', 'response_type', 'response_mode', 'scope', 'state']);

export const APPLE_SETTINGS: SettingsSpec = {
  readers: {
    scope: aTextList,
    auth_params: parameters,
    authorize_url: anEndpoint,
    access_token_url: anEndpoint,
    keys_url: anEndpoint,
    certificate_key: aSigningKey,
  },
};

/** client_id may list several ids (the web Services ID first, then iOS bundle ids): all are accepted as an ID token's audience, the first is used for calls. */
export function appleClientIds(clientId: string): string[] {
  return clientId.split(',').map((part) => part.trim()).filter((part) => part !== '');
}

type AppleApp = Pick<ProviderApp, 'id' | 'name' | 'clientId' | 'secret' | 'key' | 'settings'>;

/** What the sign-in needs to sign a client secret; undefined for an app that only verifies ID tokens (a hidden iOS bundle id). */
function signingOf(app: AppleApp, signingKey: KeyObject | undefined): { signingKey: KeyObject; keyId: string; teamId: string } | undefined {
  if (signingKey === undefined || app.secret.trim() === '' || app.key.trim() === '') return undefined;
  return { signingKey, keyId: app.secret.trim(), teamId: app.key.trim() };
}

/** The first and last name of the `user` JSON Apple posts on a first authorisation; nothing when it is absent or unreadable. */
function nameOf(user: string | null): { firstName?: string; lastName?: string } {
  if (user === null) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(user);
  } catch {
    return {};
  }
  const name = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).name : undefined;
  if (typeof name !== 'object' || name === null) return {};
  const fields = name as Record<string, unknown>;
  return { firstName: textOf(fields.firstName), lastName: textOf(fields.lastName) };
}

/**
 * The person from verified ID token claims: uid `sub`; the address as given, a private-relay one
 * (is_private_email) included, since mail sent there reaches the person; verified only when
 * email_verified is true or "true" (Apple sends the string).
 */
export function appleProfile(id: string, claims: JWTPayload, name: { firstName?: string; lastName?: string } = {}): ProviderProfile {
  const email = textOf(claims.email);
  const emails: ProviderEmail[] = email === undefined ? [] : [{ email, verified: isVouchedFor(claims.email_verified), primary: true }];
  const fullName = [name.firstName, name.lastName].filter((part) => part !== undefined).join(' ');
  return {
    uid: checkedUid(id, claims.sub),
    emails,
    data: { email, firstName: name.firstName, lastName: name.lastName, name: fullName === '' ? undefined : fullName },
    // The claims only: the access, refresh and ID tokens themselves are never kept here.
    extraData: { id_token: { ...claims }, ...(fullName === '' ? {} : { name: { firstName: name.firstName, lastName: name.lastName } }) },
  };
}

/** Throws LatchkeyError('configuration_invalid') for settings it cannot use or a client_id that names no id. */
export function appleProvider(app: AppleApp, http: ProviderHttp, clock: Clock): RedirectProvider {
  const read = readSettings('apple', app, APPLE_SETTINGS);
  const clientIds = appleClientIds(app.clientId);
  if (clientIds.length === 0) throw new LatchkeyError('configuration_invalid', `The social app "${app.id}" has no client_id (the Services ID).`);
  const clientId = clientIds[0]!;
  const endpointOf = (name: keyof typeof APPLE_ENDPOINTS): URL => read.valueOf(name, anEndpoint) ?? new URL(APPLE_ENDPOINTS[name]);
  const authorizeEndpoint = endpointOf('authorize_url');
  const tokenEndpoint = endpointOf('access_token_url');
  const scope = read.valueOf('scope', aTextList) ?? DEFAULT_SCOPE;
  const authParams = read.valueOf('auth_params', parameters) ?? {};
  const signing = signingOf(app, read.valueOf('certificate_key', aSigningKey));
  const verify = appleIdTokenVerifier(app.id, endpointOf('keys_url'), clientIds, http, clock);
  const fail = (message: string) => new ProviderError('failed', `${app.id}: ${message}`);

  async function exchangeCode(code: string, redirectUri: string): Promise<Record<string, unknown>> {
    if (signing === undefined) throw fail('the app has no certificate_key, Key ID (secret) or Team ID (key) to sign its client secret with');
    const clientSecret = await appleClientSecret({ ...signing, clientId, clock });
    const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, client_secret: clientSecret });
    const headers = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' };
    return readTokenAnswer(app.id, await requestOnce(app.id, 'token exchange', tokenEndpoint, { method: 'POST', headers, body }, http));
  }

  return {
    protocol: 'oauth2',
    id: app.id,
    type: 'apple',
    name: app.name,
    formPostCallback: true,

    authorizationOrigin() {
      return Promise.resolve(authorizeEndpoint.origin);
    },

    authorizationUrl({ redirectUri, state, extraScope = [] }) {
      const url = new URL(authorizeEndpoint);
      for (const [name, value] of Object.entries(authParams)) {
        if (!PROTECTED_PARAMS.has(name)) url.searchParams.set(name, value);
      }
      const scopes = [...new Set([...scope, ...extraScope])].filter((item) => item !== '');
      url.searchParams.set('client_id', clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('response_type', 'code');
      // Apple requires form_post whenever a scope is asked for; the callback is parked for it.
      url.searchParams.set('response_mode', 'form_post');
      if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
      url.searchParams.set('state', state);
      return Promise.resolve({ url, pending: {} });
    },

    async completeAuthorization({ callbackUrl, redirectUri, expectedState }) {
      // Apple says user_cancelled_authorize where RFC 6749 says access_denied: both are a "no".
      const callback = new URL(callbackUrl);
      if (callback.searchParams.get('error') === 'user_cancelled_authorize') callback.searchParams.set('error', 'access_denied');
      const code = readAuthorizationCallback(app.id, callback, expectedState);
      const answer = await exchangeCode(code, redirectUri);
      const idToken = textOf(answer.id_token);
      if (idToken === undefined) throw fail('the token endpoint answered no id_token');
      const claims = await verify(idToken);
      const profile = appleProfile(app.id, claims, nameOf(callback.searchParams.get('user')));
      const expiresIn = typeof answer.expires_in === 'number' && Number.isFinite(answer.expires_in) && answer.expires_in > 0 ? answer.expires_in : undefined;
      return {
        profile,
        tokens: {
          accessToken: answer.access_token as string,
          refreshToken: textOf(answer.refresh_token),
          expiresAt: expiresIn === undefined ? undefined : new Date(clock.now().getTime() + expiresIn * 1000),
          idToken,
        },
      };
    },

    async verifyIdToken(idToken) {
      return appleProfile(app.id, await verify(idToken));
    },
  };
}
