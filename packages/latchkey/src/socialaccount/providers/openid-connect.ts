/**
 * The `openid_connect` provider: any OpenID Connect server, one app per provider_id, found by
 * discovery (openid-connect-discovery.ts) and configured by the app's settings
 * (openid-connect-settings.ts). The authorization code flow with PKCE and a nonce, the ID token's
 * signature and claims checked by oauth4webapi (its iat by id-token-clock.ts), the profile from
 * userinfo or the ID token; and, for headless token login, an ID token a client obtained itself,
 * verified against the provider's keys.
 * Endpoints the app's settings replace (authorize_url, ...) are put in place of discovery's there.
 */
import * as oauth from 'oauth4webapi';
import { decodeJwt, jwtVerify } from 'jose';
import { systemClock, type Clock } from '../../core/clock.js';
import { UID_MAX_LENGTH } from '../model.js';
import type { ProviderUserData } from '../adapter.js';
import { checkSettings } from './app-settings.js';
import { ID_TOKEN_CLOCK_TOLERANCE_SECONDS, refuseIssuedInTheFuture } from './id-token-clock.js';
import type { ProviderKind } from './kind.js';
import { describeCauses, describeNetworkFailure } from './network-errors.js';
import { allowedAlgorithms, cachedDiscovery } from './openid-connect-discovery.js';
import { OPENID_CONNECT_SETTINGS, openIdConnectEndpoints, openIdConnectOptions } from './openid-connect-settings.js';
import { isVouchedFor, textOf } from './profile-fields.js';
import {
  ProviderError,
  type PendingAuthorization,
  type ProviderEmail,
  type ProviderHttp,
  type ProviderProfile,
  type ProviderTokens,
  type RedirectProvider,
} from './provider.js';
import { isLoopbackHttp } from './secure-url.js';

export type { OpenIdConnectSettings } from './openid-connect-settings.js';

export interface OpenIdConnectApp {
  providerId: string;
  name: string;
  clientId: string;
  secret: string;
  /** The app's settings (OpenIdConnectSettings), checked when the provider is built. */
  settings: Readonly<Record<string, unknown>>;
}

/** What a named provider (named-openid-connect.ts) changes of the generic one it is built on. */
export interface OpenIdConnectVariant {
  /** The kind's id: `google`, `okta`; 'openid_connect' when not given. */
  type?: string;
  /**
   * Other names the issuer signs ID tokens under besides the one its discovery gives: Google's
   * `accounts.google.com` besides https://accounts.google.com. An ID token naming one of them is
   * taken as the issuer's; every other check of it stays the same.
   */
  otherIssuerNames?: readonly string[];
}

/** The parameters of the authorization request that protect it; auth_params may not replace them. */
const PROTECTED_PARAMS = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method'];

/** The registry's entry: one provider per app, its settings checked by the spec its build reads them with. */
export const openIdConnectProviderKind: ProviderKind = {
  id: 'openid_connect',
  name: 'OpenID Connect',
  checkSettings: (settings) => checkSettings('openid_connect', settings, OPENID_CONNECT_SETTINGS),
  endpoints: openIdConnectEndpoints,
  build: (app, { http, clock }) =>
    openIdConnectProvider({ providerId: app.providerId, name: app.name, clientId: app.clientId, secret: app.secret, settings: app.settings }, http, clock),
};

/**
 * Throws LatchkeyError('configuration_invalid'), naming the app and the key, for settings it
 * cannot use. `clock` is the site's (deps.clock): an ID token's expiry and a stored token's are
 * read on it, as every other expiry in Latchkey is.
 */
export function openIdConnectProvider(app: OpenIdConnectApp, http: ProviderHttp, clock: Clock = systemClock, variant: OpenIdConnectVariant = {}): RedirectProvider {
  const id = app.providerId;
  const type = variant.type ?? 'openid_connect';
  const otherIssuerNames = variant.otherIssuerNames ?? [];
  const options = openIdConnectOptions({ id, settings: app.settings });
  const discover = cachedDiscovery(id, options, http, clock);

  /**
   * The server as oauth4webapi is to check the token endpoint's ID token against, which compares
   * the token's `iss` with the server's `issuer`: the discovered server, or, for a token that names
   * one of the issuer's other names, the same server under that name. The name is read from the
   * token unverified, only to pick which accepted name to expect; any other name is left to
   * oauth4webapi to refuse, and its checks of the signature, audience, nonce and expiry all stand.
   */
  async function issuingServer(server: oauth.AuthorizationServer, response: Response): Promise<oauth.AuthorizationServer> {
    if (otherIssuerNames.length === 0 || response.status !== 200) return server;
    const iss = unverifiedIssuer(await response.clone().json().catch(() => undefined));
    return iss !== undefined && iss !== server.issuer && otherIssuerNames.includes(iss) ? { ...server, issuer: iss } : server;
  }

  /**
   * The client as oauth4webapi takes it, set to the site's time. oauth4webapi reads the wall clock
   * and can only be told how far the time it should use is from it (clockSkew, in seconds), so the
   * offset is taken afresh for each use: the ID token's exp and iat are then checked on `clock`.
   */
  function client(): oauth.Client {
    const skew = Math.floor(clock.now().getTime() / 1000) - Math.floor(Date.now() / 1000);
    return { client_id: app.clientId, [oauth.clockSkew]: skew, [oauth.clockTolerance]: ID_TOKEN_CLOCK_TOLERANCE_SECONDS };
  }

  /** oauth4webapi's request options: the injected fetch, the timeout, and plain http only on loopback. */
  function requestOptions(endpoint: string | undefined) {
    return {
      [oauth.customFetch]: http.fetch,
      [oauth.allowInsecureRequests]: endpoint !== undefined && isLoopbackHttp(new URL(endpoint)),
      signal: () => AbortSignal.timeout(http.timeoutSeconds * 1000),
    };
  }

  function clientAuthentication(server: oauth.AuthorizationServer): oauth.ClientAuth {
    const listed = server.token_endpoint_auth_methods_supported ?? [];
    const method = options.tokenAuthMethod
      ?? (listed.includes('client_secret_basic') && !listed.includes('client_secret_post') ? 'client_secret_basic' : 'client_secret_post');
    return method === 'client_secret_basic' ? oauth.ClientSecretBasic(app.secret) : oauth.ClientSecretPost(app.secret);
  }

  function profileFrom(source: Record<string, unknown>, extraData: Record<string, unknown>): ProviderProfile {
    const uid = source[options.uidField];
    if (typeof uid !== 'string' || uid === '' || uid.length > UID_MAX_LENGTH) {
      throw new ProviderError('failed', `${id}: the "${options.uidField}" claim is not a non-empty string of at most ${UID_MAX_LENGTH} characters`);
    }
    const email = textOf(source.email);
    const emails: ProviderEmail[] = email === undefined ? [] : [{ email, verified: isVouchedFor(source.email_verified), primary: true }];
    const data: ProviderUserData = {
      email,
      username: textOf(source.preferred_username),
      name: textOf(source.name),
      firstName: textOf(source.given_name),
      lastName: textOf(source.family_name),
    };
    return { uid, emails, data, extraData };
  }

  return {
    protocol: 'oauth2',
    id,
    type,
    name: app.name,

    async authorizationOrigin() {
      return new URL((await discover()).server.authorization_endpoint!).origin;
    },

    async authorizationUrl({ redirectUri, state, extraScope = [] }) {
      const { server } = await discover();
      const url = new URL(server.authorization_endpoint!);
      for (const [name, value] of Object.entries(options.authParams)) {
        if (!PROTECTED_PARAMS.includes(name)) url.searchParams.set(name, value);
      }
      const scope = [...new Set([...options.scope, ...extraScope])];
      const nonce = oauth.generateRandomNonce();
      url.searchParams.set('client_id', app.clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('scope', scope.join(' '));
      url.searchParams.set('state', state);
      url.searchParams.set('nonce', nonce);
      const pending: PendingAuthorization = { nonce };
      if (options.pkce) {
        pending.codeVerifier = oauth.generateRandomCodeVerifier();
        url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(pending.codeVerifier));
        url.searchParams.set('code_challenge_method', 'S256');
      }
      return { url, pending };
    },

    async completeAuthorization({ callbackUrl, redirectUri, expectedState, pending }) {
      const { server } = await discover();
      const callback = checkCallback(id, server, client(), callbackUrl, expectedState);
      if (pending.nonce === undefined || (options.pkce && pending.codeVerifier === undefined)) {
        throw new ProviderError('failed', `${id}: the sign-in's saved nonce or PKCE verifier is missing`);
      }
      const nonce = pending.nonce;
      return withNetworkErrors(id, 'token exchange', http, async () => {
        const response = await oauth.authorizationCodeGrantRequest(
          server, client(), clientAuthentication(server), callback, redirectUri,
          pending.codeVerifier ?? oauth.nopkce, requestOptions(server.token_endpoint),
        );
        const issuedBy = await issuingServer(server, response);
        const result = await oauth.processAuthorizationCodeResponse(issuedBy, client(), response, { expectedNonce: nonce, requireIdToken: true });
        // The ID token came straight from the provider over TLS, which the spec deems enough; its
        // signature is checked all the same, so a token endpoint that is not the issuer's cannot vouch.
        // The discovered server (whose keys oauth4webapi keeps) checks it, whichever name it carries.
        await oauth.validateApplicationLevelSignature(server, response, requestOptions(server.jwks_uri));
        const idTokenClaims = oauth.getValidatedIdTokenClaims(result)!;
        refuseIssuedInTheFuture(id, idTokenClaims.iat, clock);
        let userinfo: Record<string, unknown> | undefined;
        if (options.fetchUserinfo) {
          const userinfoResponse = await oauth.userInfoRequest(server, client(), result.access_token, requestOptions(server.userinfo_endpoint));
          // oauth4webapi refuses a userinfo whose `sub` differs from the ID token's.
          userinfo = { ...(await oauth.processUserInfoResponse(server, client(), idTokenClaims.sub, userinfoResponse)) };
        }
        const idToken: Record<string, unknown> = { ...idTokenClaims };
        // As allauth: the profile is userinfo when fetched, else the ID token; never a mix, so an
        // email from one source is never paired with the other's email_verified.
        const profile = profileFrom(userinfo ?? idToken, { userinfo, id_token: idToken });
        const tokens: ProviderTokens = {
          accessToken: result.access_token,
          refreshToken: result.refresh_token,
          expiresAt: result.expires_in === undefined ? undefined : new Date(clock.now().getTime() + result.expires_in * 1000),
          idToken: result.id_token,
        };
        return { profile, tokens };
      });
    },

    async verifyIdToken(idToken) {
      const { server, jwks } = await discover();
      const payload = await withNetworkErrors(id, 'ID token verification', http, async () => {
        const verified = await jwtVerify(idToken, jwks, {
          issuer: [server.issuer, ...otherIssuerNames],
          audience: app.clientId,
          algorithms: allowedAlgorithms(server),
          requiredClaims: ['exp', 'iat', 'sub'],
          currentDate: clock.now(),
          clockTolerance: ID_TOKEN_CLOCK_TOLERANCE_SECONDS,
        });
        refuseIssuedInTheFuture(id, verified.payload.iat, clock);
        return verified.payload;
      });
      return profileFrom(payload, { id_token: { ...payload } });
    },
  };
}

/** The `iss` of the ID token in a token endpoint's answer, unverified; undefined when there is none to read. */
function unverifiedIssuer(answer: unknown): string | undefined {
  const idToken = (answer as { id_token?: unknown } | undefined)?.id_token;
  if (typeof idToken !== 'string') return undefined;
  try {
    const { iss } = decodeJwt(idToken);
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** The callback's parameters, checked: the issuer (when sent), the state, then any error the provider reported. */
function checkCallback(id: string, server: oauth.AuthorizationServer, client: oauth.Client, callbackUrl: URL, expectedState: string) {
  try {
    return oauth.validateAuthResponse(server, client, callbackUrl, expectedState);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) {
      if (error.error === 'access_denied') throw new ProviderError('cancelled', `${id}: the person declined at the provider`);
      throw new ProviderError('failed', `${id}: the provider answered error=${error.error} (${error.error_description ?? 'no description'})`);
    }
    throw new ProviderError('failed', `${id}: the callback was refused: ${describe(error)}`);
  }
}

/** Runs a step that talks to the provider; anything it throws becomes ProviderError('failed') naming the step. */
async function withNetworkErrors<T>(id: string, step: string, http: ProviderHttp, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    throw new ProviderError('failed', `${id}: ${step} failed: ${describeNetworkFailure(error, http, describe)}`);
  }
}

/** An error's message with its causes, and the OAuth error a provider sent. */
function describe(error: unknown): string {
  if (error instanceof oauth.ResponseBodyError) {
    return `the provider answered HTTP ${error.status} error=${error.error} (${error.error_description ?? 'no description'})`;
  }
  return describeCauses(error);
}
