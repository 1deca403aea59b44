/**
 * A Keycloak realm, as an OpenID Connect provider: https://www.keycloak.org/docs/latest/securing_apps/#_oidc
 * (issuer <server>/realms/<realm>, discovery beneath it; userinfo's `email_verified`). The server
 * is `keycloak_url` (allauth's KEYCLOAK_URL, e.g. https://keycloak.example.com, or with /auth on
 * Keycloak before 17) and the realm `keycloak_realm` (KEYCLOAK_REALM).
 */
import { aText } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { namedOpenIdConnectKind } from '../named-openid-connect.js';
import { aUrlText, requiredSetting, withoutTokenLogin } from './oidc-kinds.js';

export const keycloakProviderKind: ProviderKind = withoutTokenLogin(namedOpenIdConnectKind({
  type: 'keycloak',
  name: 'Keycloak',
  issuer: (settings) => {
    const url = requiredSetting('keycloak', settings, 'keycloak_url', "the Keycloak server's URL, such as https://keycloak.example.com", aUrlText);
    if (typeof url !== 'string') return url;
    const realm = requiredSetting('keycloak', settings, 'keycloak_realm', 'the realm\'s name', aText);
    return typeof realm === 'string' ? `${url}/realms/${encodeURIComponent(realm)}` : realm;
  },
  settingsReaders: { keycloak_url: aUrlText, keycloak_realm: aText },
  defaultScope: ['openid', 'profile', 'email'],
}));
