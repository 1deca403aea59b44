/**
 * An OpenID Connect app's `settings`, named as in allauth's openid_connect provider: what each key
 * may hold (checked by app-settings.ts at start-up, by the stored apps' flow and when the provider
 * is built), and the values the provider uses, defaults applied.
 */
import { aBoolean, anEndpoint, aText, aTextList, oneOf, parameters, readSettings, type SettingsSpec } from './app-settings.js';
import type { SettingsEndpoint } from './private-hosts.js';
import { secureUrl } from './secure-url.js';

export const TOKEN_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;
export type TokenAuthMethod = (typeof TOKEN_AUTH_METHODS)[number];

/** The settings as an operator writes them (the JSON of SOCIALACCOUNT_PROVIDERS, the admin's field). */
export type OpenIdConnectSettings = {
  /** The issuer; discovery is read at server_url + '/.well-known/openid-configuration' unless it already holds '/.well-known/'. */
  server_url: string;
  /** When absent: basic only if discovery lists basic but not post (as allauth). */
  token_auth_method?: TokenAuthMethod;
  /** Default true (allauth's default is false; PKCE costs nothing and every current provider accepts it). */
  oauth_pkce_enabled?: boolean;
  /** Default true: the profile then comes from userinfo, else from the ID token. */
  fetch_userinfo?: boolean;
  /** The claim that identifies the person; default 'sub'. Never pick a mutable one (email, preferred_username). */
  uid_field?: string;
  scope?: string[];
  /** Merged into the authorization request; it cannot replace the parameters that secure it. */
  auth_params?: Record<string, string>;
  /**
   * Endpoints that replace discovery's one by one, under the OAuth 2.0 base's names (oauth2.ts), for
   * a proxy or a front door of the provider's. Discovery is still read at server_url: its issuer
   * is what ID tokens must name, and it gives every endpoint not replaced.
   */
  authorize_url?: string;
  access_token_url?: string;
  /** The userinfo endpoint. */
  profile_url?: string;
  /** The keys ID tokens are checked with. */
  jwks_url?: string;
};

export const OPENID_CONNECT_SETTINGS: SettingsSpec = {
  required: { server_url: "the identity provider's issuer URL" },
  readers: {
    server_url: anEndpoint,
    token_auth_method: oneOf(TOKEN_AUTH_METHODS),
    oauth_pkce_enabled: aBoolean,
    fetch_userinfo: aBoolean,
    uid_field: aText,
    scope: aTextList,
    auth_params: parameters,
    // An https URL, or plain http on loopback (secure-url.ts), as every endpoint discovery gives:
    // Latchkey sends the person, the client secret and tokens there.
    authorize_url: anEndpoint,
    access_token_url: anEndpoint,
    profile_url: anEndpoint,
    jwks_url: anEndpoint,
  },
};

/** The settings that say where the provider is: the issuer, and the endpoints that replace discovery's. */
const ENDPOINT_KEYS = ['server_url', 'authorize_url', 'access_token_url', 'profile_url', 'jwks_url'] as const;

/** The provider's URLs settings give, once OPENID_CONNECT_SETTINGS has taken them (ProviderKind.endpoints). */
export function openIdConnectEndpoints(settings: Readonly<Record<string, unknown>>): SettingsEndpoint[] {
  return ENDPOINT_KEYS.flatMap((key) => {
    const url = secureUrl(settings[key]);
    return url === undefined ? [] : [{ setting: key, url }];
  });
}

/** The settings as the provider uses them. */
export interface OpenIdConnectOptions {
  serverUrl: URL;
  tokenAuthMethod: TokenAuthMethod | undefined;
  pkce: boolean;
  fetchUserinfo: boolean;
  uidField: string;
  scope: string[];
  authParams: Record<string, string>;
  /** The endpoints the settings replace (authorize_url, ...), each under the discovery name it replaces; undefined where discovery's stands. */
  authorizationEndpoint: URL | undefined;
  tokenEndpoint: URL | undefined;
  userinfoEndpoint: URL | undefined;
  jwksUri: URL | undefined;
}

/** Throws LatchkeyError('configuration_invalid') naming the app and the key for settings it cannot use. */
export function openIdConnectOptions(app: { id: string; settings: Readonly<Record<string, unknown>> }): OpenIdConnectOptions {
  const read = readSettings('openid_connect', app, OPENID_CONNECT_SETTINGS);
  return {
    serverUrl: read.valueOf('server_url', anEndpoint)!,
    tokenAuthMethod: read.valueOf('token_auth_method', oneOf(TOKEN_AUTH_METHODS)),
    pkce: read.valueOf('oauth_pkce_enabled', aBoolean) ?? true,
    fetchUserinfo: read.valueOf('fetch_userinfo', aBoolean) ?? true,
    uidField: read.valueOf('uid_field', aText) ?? 'sub',
    scope: read.valueOf('scope', aTextList) ?? ['openid', 'profile', 'email'],
    authParams: read.valueOf('auth_params', parameters) ?? {},
    authorizationEndpoint: read.valueOf('authorize_url', anEndpoint),
    tokenEndpoint: read.valueOf('access_token_url', anEndpoint),
    userinfoEndpoint: read.valueOf('profile_url', anEndpoint),
    jwksUri: read.valueOf('jwks_url', anEndpoint),
  };
}
