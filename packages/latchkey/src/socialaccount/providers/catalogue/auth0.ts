/**
 * Auth0, as an OpenID Connect provider: https://auth0.com/docs/get-started/applications/configure-applications-with-oidc-discovery
 * (issuer https://<tenant>.auth0.com/ or a custom domain, discovery beneath it; userinfo's
 * `email_verified`). The tenant's URL is `auth0_url` (allauth's AUTH0_URL), e.g.
 * https://tenant.auth0.com.
 */
import { anEndpoint } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { namedOpenIdConnectKind } from '../named-openid-connect.js';
import { aUrlText, requiredSetting, withoutTokenLogin } from './oidc-kinds.js';

export const auth0ProviderKind: ProviderKind = withoutTokenLogin(namedOpenIdConnectKind({
  type: 'auth0',
  name: 'Auth0',
  // Auth0's issuer ends with a slash; discovery compares issuers without it.
  issuer: (settings) => requiredSetting('auth0', settings, 'auth0_url', 'the tenant\'s URL, such as https://tenant.auth0.com', aUrlText),
  settingsReaders: { auth0_url: anEndpoint },
  defaultScope: ['openid', 'profile', 'email'],
}));
