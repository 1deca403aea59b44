/**
 * A named provider that is an OpenID Connect identity provider at a known address (Google,
 * Slack, LinkedIn, Okta's org server, Auth0, a Keycloak realm): the generic OpenID Connect
 * provider (openid-connect.ts: discovery, PKCE, the ID token verified against the provider's keys,
 * headless token login) with its issuer filled in, under the provider's own id and URL
 * (/accounts/google/login/, as allauth's). The issuer comes from the provider's settings (a
 * tenant's domain, a realm URL) and may be replaced whole with `server_url`, for a fixture server
 * or a proxy. Each endpoint may be replaced on its own too (authorize_url, access_token_url,
 * profile_url, jwks_url), as for any OpenID Connect app (openid-connect-settings.ts).
 */
import { checkSettings, unusableSettings, type SettingProblem, type SettingReader } from './app-settings.js';
import type { ProviderKind } from './kind.js';
import { openIdConnectProvider } from './openid-connect.js';
import { OPENID_CONNECT_SETTINGS, openIdConnectEndpoints } from './openid-connect-settings.js';

type Settings = Readonly<Record<string, unknown>>;

/** What namedOpenIdConnectKind needs to know of a provider: its kind's id and name, and how to find its issuer. */
export interface NamedOpenIdConnectDescription {
  /** The kind's id: `google`, `okta`, ... */
  type: string;
  name: string;
  /** The issuer for these settings, or what is missing for it (Okta without its org URL). */
  issuer: (settings: Settings) => string | SettingProblem;
  /** Readers of the provider's own settings keys (`okta_base_url`, `domain`). */
  settingsReaders?: Readonly<Record<string, SettingReader<unknown>>>;
  /** Used unless the app's settings.scope says otherwise; OpenID Connect's openid, profile, email unless said. */
  defaultScope?: readonly string[];
  /**
   * The other names the issuer signs ID tokens under, given the issuer (server_url without a
   * trailing slash): Google's `accounts.google.com` besides `https://accounts.google.com`. A token
   * naming one of them is taken as the issuer's; any other issuer is refused, as always.
   */
  issuerAlsoNamed?: (issuer: string) => readonly string[];
}

/** The settings the generic provider is built with: the issuer filled in, the provider's defaults under the app's own. */
function openIdConnectSettings(description: NamedOpenIdConnectDescription, settings: Settings): { settings: Settings } | { problem: SettingProblem } {
  if (typeof settings.server_url === 'string') return { settings };
  const issuer = description.issuer(settings);
  if (typeof issuer !== 'string') return { problem: issuer };
  return { settings: { ...(description.defaultScope ? { scope: [...description.defaultScope] } : {}), ...settings, server_url: issuer } };
}

/**
 * A provider kind for an OpenID Connect provider of the project's own at a known address, for
 * createLatchkey's `socialProviderKinds`: the generic OpenID Connect provider under its own id and URLs.
 */
export function namedOpenIdConnectKind(description: NamedOpenIdConnectDescription): ProviderKind {
  const spec = { ...OPENID_CONNECT_SETTINGS, readers: { ...OPENID_CONNECT_SETTINGS.readers, ...description.settingsReaders } };
  return {
    id: description.type,
    name: description.name,
    checkSettings(settings) {
      const filled = openIdConnectSettings(description, settings);
      return 'problem' in filled ? filled.problem : checkSettings(description.type, filled.settings, spec);
    },
    endpoints(settings) {
      const filled = openIdConnectSettings(description, settings);
      if ('problem' in filled) return [];
      // An issuer the provider's own keys give (a realm URL, a tenant's domain) is named as such.
      const issuerGiven = settings.server_url !== undefined;
      return openIdConnectEndpoints(filled.settings).map((endpoint) => (endpoint.setting === 'server_url' && !issuerGiven ? { ...endpoint, setting: 'the issuer its settings give' } : endpoint));
    },
    build(app, { http, clock }) {
      const filled = openIdConnectSettings(description, app.settings);
      if ('problem' in filled) throw unusableSettings(app.id, filled.problem);
      const problem = checkSettings(description.type, filled.settings, spec);
      if (problem !== undefined) throw unusableSettings(app.id, problem);
      const issuer = String(filled.settings.server_url).replace(/\/+$/, '');
      const otherIssuerNames = description.issuerAlsoNamed?.(issuer) ?? [];
      return openIdConnectProvider(
        { providerId: app.id, name: app.name, clientId: app.clientId, secret: app.secret, settings: filled.settings },
        http,
        clock,
        { type: description.type, otherIssuerNames },
      );
    },
  };
}
