/**
 * Okta's org authorization server, as an OpenID Connect provider:
 * https://developer.okta.com/docs/reference/api/oidc/ (issuer https://<your Okta domain>, its
 * endpoints /oauth2/v1/authorize, /token and /userinfo; userinfo's `email_verified`).
 *
 * The Okta domain is `okta_base_url` (allauth's OKTA_BASE_URL, provider-wide or per app), a host
 * such as dev-123.okta.com. The uid is `sub`, the user's immutable Okta id: allauth once used
 * `preferred_username`, which a user or an administrator can change, so that a new user given an
 * old login name would take over its owner's account here. uid_field may name another immutable
 * claim, never that one nor `email`. A custom authorization server (https://<domain>/oauth2/<id>)
 * is reached with server_url, or with the generic openid_connect provider.
 */
import { aText, type SettingReader } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { namedOpenIdConnectKind } from '../named-openid-connect.js';
import { aHostOrUrl, requiredSetting, withoutTokenLogin } from './oidc-kinds.js';

/** Claims that a person or an administrator can change: a uid read from one can come to name someone else. */
const MUTABLE_CLAIMS = ['preferred_username', 'email', 'name', 'nickname'];

const anImmutableClaim: SettingReader<string> = (value, key) => {
  const read = aText(value, key);
  if ('problem' in read) return read;
  return MUTABLE_CLAIMS.includes(read.value)
    ? { problem: `${key} must name a claim that never changes, such as "sub", not ${JSON.stringify(read.value)}, which can come to name someone else` }
    : read;
};

export const oktaProviderKind: ProviderKind = withoutTokenLogin(namedOpenIdConnectKind({
  type: 'okta',
  name: 'Okta',
  issuer: (settings) => requiredSetting('okta', settings, 'okta_base_url', 'the Okta domain, such as dev-123.okta.com', aHostOrUrl),
  settingsReaders: { okta_base_url: aHostOrUrl, uid_field: anImmutableClaim },
  defaultScope: ['openid', 'profile', 'email', 'offline_access'],
}));
