import * as oauth from 'oauth4webapi';
import { createRemoteJWKSet, customFetch as joseCustomFetch, jwtVerify, type RemoteJWKSetOptions } from 'jose';
import { UID_MAX_LENGTH } from '../model.js';
import type { ProviderUserData } from '../adapter.js';
import {
  ProviderError,
  type PendingAuthorization,
  type ProviderEmail,
  type ProviderHttp,
  type ProviderProfile,
  type ProviderTokens,
  type RedirectProvider,
} from './provider.js';

/** An OpenID Connect app's `settings`, named as in allauth's openid_connect provider. */
export interface OpenIdConnectSettings {
  /** The issuer; discovery is read at server_url + '/.well-known/openid-configuration' unless it already holds '/.well-known/'. */
  server_url: string;
  /** When absent: basic only if discovery lists basic but not post (as allauth). */
  token_auth_method?: 'client_secret_basic' | 'client_secret_post';
  /** Default true (allauth's default is false; PKCE costs nothing and every current provider accepts it). */
  oauth_pkce_enabled?: boolean;
  /** Default true: the profile then comes from userinfo, else from the ID token. */
  fetch_userinfo?: boolean;
  /** The claim that identifies the person; default 'sub'. Never pick a mutable one (email, preferred_username). */
  uid_field?: string;
  scope?: string[];
  /** Merged into the authorization request; it cannot replace the parameters that secure it. */
  auth_params?: Record<string, string>;
}

export interface OpenIdConnectApp {
  providerId: string;
  name: string;
  clientId: string;
  secret: string;
  settings: OpenIdConnectSettings;
}

/**
 * The ID token signatures accepted: asymmetric ones only. `none` would let anyone write a token,
 * and HS* would let anyone holding the client secret (every app sharing it) forge one.
 */
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'];

/** Discovery is re-read after this long, so key and endpoint changes at the provider are picked up without a restart. */
const DISCOVERY_TTL_MS = 10 * 60 * 1000;

/** The parameters of the authorization request that protect it; auth_params may not replace them. */
const PROTECTED_PARAMS = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method'];

interface Discovery {
  server: oauth.AuthorizationServer;
  jwks: ReturnType<typeof createRemoteJWKSet>;
}

export function openIdConnectProvider(app: OpenIdConnectApp, http: ProviderHttp): RedirectProvider {
  const { settings } = app;
  const id = app.providerId;
  const usePkce = settings.oauth_pkce_enabled ?? true;
  const fetchUserinfo = settings.fetch_userinfo ?? true;
  const uidField = settings.uid_field ?? 'sub';
  const client: oauth.Client = { client_id: app.clientId };
  let cached: { at: number; discovery: Promise<Discovery> } | undefined;

  /** oauth4webapi's request options: the injected fetch, the timeout, and plain http only on loopback. */
  function requestOptions(endpoint: string | undefined) {
    return {
      [oauth.customFetch]: http.fetch,
      [oauth.allowInsecureRequests]: endpoint !== undefined && isLoopbackHttp(new URL(endpoint)),
      signal: () => AbortSignal.timeout(http.timeoutSeconds * 1000),
    };
  }

  function discover(): Promise<Discovery> {
    if (cached === undefined || Date.now() - cached.at > DISCOVERY_TTL_MS) {
      const discovery = readDiscovery(id, settings, fetchUserinfo, http);
      cached = { at: Date.now(), discovery };
      // A failed discovery is not kept: the next sign-in tries again.
      discovery.catch(() => {
        if (cached?.discovery === discovery) cached = undefined;
      });
    }
    return cached.discovery;
  }

  function clientAuthentication(server: oauth.AuthorizationServer): oauth.ClientAuth {
    const listed = server.token_endpoint_auth_methods_supported ?? [];
    const method = settings.token_auth_method
      ?? (listed.includes('client_secret_basic') && !listed.includes('client_secret_post') ? 'client_secret_basic' : 'client_secret_post');
    return method === 'client_secret_basic' ? oauth.ClientSecretBasic(app.secret) : oauth.ClientSecretPost(app.secret);
  }

  function profileFrom(source: Record<string, unknown>, extraData: Record<string, unknown>): ProviderProfile {
    const uid = source[uidField];
    if (typeof uid !== 'string' || uid === '' || uid.length > UID_MAX_LENGTH) {
      throw new ProviderError('failed', `${id}: the "${uidField}" claim is not a non-empty string of at most ${UID_MAX_LENGTH} characters`);
    }
    const email = text(source.email);
    const emails: ProviderEmail[] = email === undefined ? [] : [{ email, verified: isVouchedFor(source.email_verified), primary: true }];
    const data: ProviderUserData = {
      email,
      username: text(source.preferred_username),
      name: text(source.name),
      firstName: text(source.given_name),
      lastName: text(source.family_name),
    };
    return { uid, emails, data, extraData };
  }

  return {
    id,
    type: 'openid_connect',
    name: app.name,

    async authorizationOrigin() {
      return new URL((await discover()).server.authorization_endpoint!).origin;
    },

    async authorizationUrl({ redirectUri, state, extraScope = [] }) {
      const { server } = await discover();
      const url = new URL(server.authorization_endpoint!);
      for (const [name, value] of Object.entries(settings.auth_params ?? {})) {
        if (!PROTECTED_PARAMS.includes(name)) url.searchParams.set(name, value);
      }
      const scope = [...new Set([...(settings.scope ?? ['openid', 'profile', 'email']), ...extraScope])];
      const nonce = oauth.generateRandomNonce();
      url.searchParams.set('client_id', app.clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('scope', scope.join(' '));
      url.searchParams.set('state', state);
      url.searchParams.set('nonce', nonce);
      const pending: PendingAuthorization = { nonce };
      if (usePkce) {
        pending.codeVerifier = oauth.generateRandomCodeVerifier();
        url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(pending.codeVerifier));
        url.searchParams.set('code_challenge_method', 'S256');
      }
      return { url, pending };
    },

    async completeAuthorization({ callbackUrl, redirectUri, expectedState, pending }) {
      const { server } = await discover();
      const callback = checkCallback(id, server, client, callbackUrl, expectedState);
      if (pending.nonce === undefined || (usePkce && pending.codeVerifier === undefined)) {
        throw new ProviderError('failed', `${id}: the sign-in's saved nonce or PKCE verifier is missing`);
      }
      const nonce = pending.nonce;
      return withNetworkErrors(id, 'token exchange', http, async () => {
        const response = await oauth.authorizationCodeGrantRequest(
          server, client, clientAuthentication(server), callback, redirectUri,
          pending.codeVerifier ?? oauth.nopkce, requestOptions(server.token_endpoint),
        );
        const result = await oauth.processAuthorizationCodeResponse(server, client, response, { expectedNonce: nonce, requireIdToken: true });
        // The ID token came straight from the provider over TLS, which the spec deems enough; its
        // signature is checked all the same, so a token endpoint that is not the issuer's cannot vouch.
        await oauth.validateApplicationLevelSignature(server, response, requestOptions(server.jwks_uri));
        const idTokenClaims = oauth.getValidatedIdTokenClaims(result)!;
        let userinfo: Record<string, unknown> | undefined;
        if (fetchUserinfo) {
          const userinfoResponse = await oauth.userInfoRequest(server, client, result.access_token, requestOptions(server.userinfo_endpoint));
          // oauth4webapi refuses a userinfo whose `sub` differs from the ID token's.
          userinfo = { ...(await oauth.processUserInfoResponse(server, client, idTokenClaims.sub, userinfoResponse)) };
        }
        const idToken: Record<string, unknown> = { ...idTokenClaims };
        // As allauth: the profile is userinfo when fetched, else the ID token; never a mix, so an
        // email from one source is never paired with the other's email_verified.
        const profile = profileFrom(userinfo ?? idToken, { userinfo, id_token: idToken });
        const tokens: ProviderTokens = {
          accessToken: result.access_token,
          refreshToken: result.refresh_token,
          expiresAt: result.expires_in === undefined ? undefined : new Date(Date.now() + result.expires_in * 1000),
          idToken: result.id_token,
        };
        return { profile, tokens };
      });
    },

    async verifyIdToken(idToken) {
      const { server, jwks } = await discover();
      const payload = await withNetworkErrors(id, 'ID token verification', http, async () => {
        const verified = await jwtVerify(idToken, jwks, {
          issuer: server.issuer,
          audience: app.clientId,
          algorithms: allowedAlgorithms(server),
          requiredClaims: ['exp', 'iat', 'sub'],
        });
        return verified.payload;
      });
      return profileFrom(payload, { id_token: { ...payload } });
    },
  };
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

/** Reads and checks the provider's discovery document, with messages that tell an operator what to fix. */
async function readDiscovery(id: string, settings: OpenIdConnectSettings, fetchUserinfo: boolean, http: ProviderHttp): Promise<Discovery> {
  const fail = (message: string) => new ProviderError('failed', `${id}: ${message}`);
  const serverUrl = secureUrl(settings.server_url);
  if (serverUrl === undefined) {
    throw fail(`server_url ${JSON.stringify(settings.server_url)} is not an https URL (plain http is allowed on loopback only)`);
  }
  const documentUrl = serverUrl.pathname.includes('/.well-known/')
    ? serverUrl
    : new URL(`${serverUrl.href.replace(/\/+$/, '')}/.well-known/openid-configuration`);
  const hint = cognitoHint(serverUrl);
  let response: Response;
  try {
    response = await (http.fetch ?? fetch)(documentUrl, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(http.timeoutSeconds * 1000),
    });
  } catch (error) {
    throw fail(`OpenID Connect discovery at ${documentUrl.href} is unreachable: ${describeNetwork(error, http)}${hint}`);
  }
  if (response.status !== 200) {
    throw fail(`OpenID Connect discovery at ${documentUrl.href} answered HTTP ${response.status}${hint}`);
  }
  let document: unknown;
  try {
    document = await response.json();
  } catch {
    throw fail(`OpenID Connect discovery at ${documentUrl.href} did not answer with JSON${hint}`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw fail(`OpenID Connect discovery at ${documentUrl.href} is not a JSON object`);
  }
  const server = document as oauth.AuthorizationServer;
  if (typeof server.issuer !== 'string' || server.issuer === '') {
    throw fail(`OpenID Connect discovery at ${documentUrl.href} names no issuer`);
  }
  if (server.issuer.includes('{tenantid}')) {
    throw fail(
      `server_url ${serverUrl.href} is a multi-tenant Microsoft Entra endpoint (common, organizations or consumers) whose issuer `
        + `${server.issuer} is a template no ID token can match: use your tenant's URL, https://login.microsoftonline.com/<tenant id>/v2.0`,
    );
  }
  // A server_url that names the document itself gives no issuer to compare with; either way the
  // document's issuer is what every ID token's `iss` must equal.
  const serverUrlIsIssuer = documentUrl !== serverUrl;
  if (serverUrlIsIssuer && withoutTrailingSlash(server.issuer) !== withoutTrailingSlash(serverUrl.href)) {
    throw fail(`OpenID Connect discovery at ${documentUrl.href} names issuer ${server.issuer}, not server_url ${serverUrl.href}: set server_url to the issuer`);
  }
  const needed = ['authorization_endpoint', 'token_endpoint', 'jwks_uri', ...(fetchUserinfo ? ['userinfo_endpoint'] : [])] as const;
  for (const name of needed) {
    if (secureUrl(server[name]) === undefined) {
      throw fail(`OpenID Connect discovery at ${documentUrl.href} has no usable ${name} (an https URL, or plain http on loopback only)`);
    }
  }
  const algorithms = allowedAlgorithms(server);
  if (algorithms.length === 0) {
    throw fail(`the provider signs ID tokens only with ${String(server.id_token_signing_alg_values_supported)}; Latchkey accepts ${ID_TOKEN_ALGORITHMS.join(', ')}`);
  }
  // oauth4webapi checks each ID token's `alg` against this list; narrowed to the allow-list.
  const checked: oauth.AuthorizationServer = { ...server, id_token_signing_alg_values_supported: algorithms };
  const jwksOptions: RemoteJWKSetOptions = { timeoutDuration: http.timeoutSeconds * 1000 };
  if (http.fetch !== undefined) jwksOptions[joseCustomFetch] = http.fetch;
  return { server: checked, jwks: createRemoteJWKSet(new URL(server.jwks_uri!), jwksOptions) };
}

/** Runs a step that talks to the provider; anything it throws becomes ProviderError('failed') naming the step. */
async function withNetworkErrors<T>(id: string, step: string, http: ProviderHttp, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    throw new ProviderError('failed', `${id}: ${step} failed: ${describeNetwork(error, http)}`);
  }
}

function allowedAlgorithms(server: oauth.AuthorizationServer): string[] {
  const listed = server.id_token_signing_alg_values_supported;
  return Array.isArray(listed) ? ID_TOKEN_ALGORITHMS.filter((alg) => listed.includes(alg)) : ID_TOKEN_ALGORITHMS;
}

/** Only `true` or the string "true" (Cognito's and Apple's userinfo send strings) vouch for an address. */
function isVouchedFor(value: unknown): boolean {
  return value === true || value === 'true';
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The URL when it is https, or plain http on loopback (test providers); else undefined. */
function secureUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  return url.protocol === 'https:' || isLoopbackHttp(url) ? url : undefined;
}

function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}

/** Cognito's hosted-UI domain serves the sign-in pages but no discovery; the issuer lives elsewhere. */
function cognitoHint(serverUrl: URL): string {
  if (!serverUrl.hostname.endsWith('.amazoncognito.com')) return '';
  const region = /\.auth\.([a-z0-9-]+)\.amazoncognito\.com$/.exec(serverUrl.hostname)?.[1] ?? '<region>';
  return `. ${serverUrl.hostname} is an Amazon Cognito hosted-UI domain, which serves no OpenID Connect discovery: `
    + `set server_url to the user pool's issuer, https://cognito-idp.${region}.amazonaws.com/<user pool id>`;
}

function withoutTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function describeNetwork(error: unknown, http: ProviderHttp): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer within ${http.timeoutSeconds} s (SOCIALACCOUNT_REQUESTS_TIMEOUT)`;
  }
  return describe(error);
}

/** An error's message with its causes (fetch hides ECONNREFUSED in `cause`), and the OAuth error a provider sent. */
function describe(error: unknown): string {
  if (error instanceof oauth.ResponseBodyError) {
    return `the provider answered HTTP ${error.status} error=${error.error} (${error.error_description ?? 'no description'})`;
  }
  const parts: string[] = [];
  for (let current: unknown = error; current instanceof Error && parts.length < 3; current = current.cause) {
    parts.push(current.message);
  }
  return parts.length > 0 ? parts.join(': ') : String(error);
}
