/**
 * OpenID Connect Discovery 1.0 for one app: the provider's configuration document read at its
 * server_url, checked so that a mistake tells the operator what to fix (Cognito's hosted-UI
 * domain, Microsoft Entra's multi-tenant issuer, an issuer that is not server_url), narrowed to the
 * ID token algorithms Latchkey accepts, with the endpoints the app's settings replace (authorize_url,
 * ...) put in place of its own, and kept for a while. Its keys (JWKS) verify ID tokens.
 */
import type * as oauth from 'oauth4webapi';
import type { Clock } from '../../core/clock.js';
import { createRemoteJWKSet, customFetch as joseCustomFetch, type RemoteJWKSetOptions } from 'jose';
import { describeNetworkFailure } from './network-errors.js';
import type { OpenIdConnectOptions } from './openid-connect-settings.js';
import { ProviderError, type ProviderHttp } from './provider.js';
import { ANY_HOST, privateUrlProblem } from './private-hosts.js';
import { SECURE_URL_RULE, secureUrl } from './secure-url.js';

/**
 * The ID token signatures accepted: asymmetric ones only. `none` would let anyone write a token,
 * and HS* would let anyone holding the client secret (every app sharing it) forge one.
 */
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'];

/** Discovery is re-read after this long, so key and endpoint changes at the provider are picked up without a restart. */
const DISCOVERY_TTL_MS = 10 * 60 * 1000;

export interface Discovery {
  /** The document, its id_token_signing_alg_values_supported narrowed to the accepted algorithms. */
  server: oauth.AuthorizationServer;
  jwks: ReturnType<typeof createRemoteJWKSet>;
}

/** What discovery is read with: where, whether userinfo is needed, and the endpoints that replace the document's. */
export type DiscoveryOptions = Pick<OpenIdConnectOptions, 'serverUrl' | 'fetchUserinfo' | 'authorizationEndpoint' | 'tokenEndpoint' | 'userinfoEndpoint' | 'jwksUri'>;

/**
 * The app's discovery, read on first use and again once DISCOVERY_TTL_MS has passed on `clock`; a
 * failed read is not kept, so the next sign-in tries again. Throws (rejects with) ProviderError('failed').
 */
export function cachedDiscovery(id: string, options: DiscoveryOptions, http: ProviderHttp, clock: Clock): () => Promise<Discovery> {
  let cached: { at: number; discovery: Promise<Discovery> } | undefined;
  return () => {
    const now = clock.now().getTime();
    // A clock moved back (a test's) counts as time passed too: the document is read again.
    if (cached === undefined || Math.abs(now - cached.at) > DISCOVERY_TTL_MS) {
      const discovery = readDiscovery(id, options, http);
      cached = { at: now, discovery };
      discovery.catch(() => {
        if (cached?.discovery === discovery) cached = undefined;
      });
    }
    return cached.discovery;
  };
}

/** The algorithms of the allow-list the provider says it signs ID tokens with (all of them when it does not say). */
export function allowedAlgorithms(server: oauth.AuthorizationServer): string[] {
  const listed = server.id_token_signing_alg_values_supported;
  return Array.isArray(listed) ? ID_TOKEN_ALGORITHMS.filter((alg) => listed.includes(alg)) : ID_TOKEN_ALGORITHMS;
}

/** Reads and checks the provider's discovery document, with messages that tell an operator what to fix. */
async function readDiscovery(id: string, options: DiscoveryOptions, http: ProviderHttp): Promise<Discovery> {
  const { serverUrl, fetchUserinfo } = options;
  const fail = (message: string) => new ProviderError('failed', `${id}: ${message}`);
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
    throw fail(`OpenID Connect discovery at ${documentUrl.href} is unreachable: ${describeNetworkFailure(error, http)}${hint}`);
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
  const published = document as oauth.AuthorizationServer;
  // The settings' endpoints were checked (https, or http on loopback; where a provider may be) at
  // start-up; the issuer is never replaced, so ID tokens must still name the one the document gives.
  const server: oauth.AuthorizationServer = {
    ...published,
    authorization_endpoint: options.authorizationEndpoint?.href ?? published.authorization_endpoint,
    token_endpoint: options.tokenEndpoint?.href ?? published.token_endpoint,
    userinfo_endpoint: options.userinfoEndpoint?.href ?? published.userinfo_endpoint,
    jwks_uri: options.jwksUri?.href ?? published.jwks_uri,
  };
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
    const url = secureUrl(server[name]);
    if (url === undefined) {
      throw fail(`OpenID Connect discovery at ${documentUrl.href} has no usable ${name} (an https URL; ${SECURE_URL_RULE})`);
    }
    // The document names where the secret, the code and tokens go next: it is held to where a
    // provider may be as the app's settings are (private-hosts.ts).
    const privateHost = privateUrlProblem(url, http.hostRule ?? ANY_HOST);
    if (privateHost !== undefined) throw fail(`OpenID Connect discovery at ${documentUrl.href} has ${name} ${JSON.stringify(url.href)}: it ${privateHost}`);
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
