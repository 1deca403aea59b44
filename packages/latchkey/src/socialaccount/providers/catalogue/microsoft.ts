/**
 * Microsoft accounts through the Microsoft identity platform and Microsoft Graph, as allauth's
 * `microsoft` provider. Shapes follow
 * https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow (authorize and
 * token) and https://learn.microsoft.com/en-us/graph/api/user-get (the /me profile).
 *
 * The address is never vouched for: `mail` is whatever a tenant's administrator typed, and
 * `userPrincipalName` need not be a mailbox at all, so trusting either would let one tenant claim
 * another's people (the "nOAuth" flaw).
 */
import { anEndpoint, type SettingReader } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind } from '../oauth2.js';
import { textOf } from '../profile-fields.js';

/**
 * A tenant as it goes into the URL's path: `common`, `organizations`, `consumers`, a tenant's GUID
 * or its domain. Anything with a slash, a query or an escape could point the sign-in elsewhere.
 */
const aTenant: SettingReader<string> = (value, key) =>
  typeof value === 'string' && /^[A-Za-z0-9][A-Za-z0-9.-]{0,127}$/.test(value)
    ? { value }
    : { problem: `${key} must be a tenant name, GUID or domain (letters, digits, '.' and '-'), such as "common" or "contoso.onmicrosoft.com"` };

/** The profile's properties read; $select keeps the answer to what is used and kept. */
const SELECTED = ['id', 'displayName', 'givenName', 'surname', 'mail', 'userPrincipalName', 'preferredLanguage'];

/** A URL setting as written (the reader has checked it), else the public default. */
function urlSetting(settings: Readonly<Record<string, unknown>>, key: string, fallback: string): string {
  return typeof settings[key] === 'string' ? settings[key] : fallback;
}

export const microsoftProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'microsoft',
  name: 'Microsoft Graph',
  authorizeUrl: '{login_url}/{tenant}/oauth2/v2.0/authorize',
  accessTokenUrl: '{login_url}/{tenant}/oauth2/v2.0/token',
  profileUrl: `{graph_url}/v1.0/me?$select=${SELECTED.join(',')}`,
  defaultScope: ['User.Read'],
  settingsReaders: { tenant: aTenant, login_url: anEndpoint, graph_url: anEndpoint },
  endpointValues: (settings) => ({
    // A single-tenant app must name its tenant: `common` is refused for it (AADSTS50194).
    tenant: typeof settings.tenant === 'string' ? settings.tenant : 'common',
    login_url: urlSetting(settings, 'login_url', 'https://login.microsoftonline.com'),
    graph_url: urlSetting(settings, 'graph_url', 'https://graph.microsoft.com'),
  }),
  profile(json) {
    const email = textOf(json.mail) ?? textOf(json.userPrincipalName);
    return {
      uid: json.id,
      emails: email === undefined ? [] : [{ email, verified: false, primary: true }],
      data: { email, name: textOf(json.displayName), firstName: textOf(json.givenName), lastName: textOf(json.surname) },
    };
  },
});
