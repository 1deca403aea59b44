/**
 * An OpenID Connect app's `settings`, named as in allauth's openid_connect provider: what each key
 * may hold (checked by app-settings.ts at start-up, by the stored apps' flow and when the provider
 * is built), and the values the provider uses, defaults applied.
 */
import { aBoolean, anEndpoint, aText, aTextList, oneOf, parameters, readSettings, type SettingsSpec } from './app-settings.js';

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
  },
};

/** The settings as the provider uses them. */
export interface OpenIdConnectOptions {
  serverUrl: URL;
  tokenAuthMethod: TokenAuthMethod | undefined;
  pkce: boolean;
  fetchUserinfo: boolean;
  uidField: string;
  scope: string[];
  authParams: Record<string, string>;
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
  };
}
