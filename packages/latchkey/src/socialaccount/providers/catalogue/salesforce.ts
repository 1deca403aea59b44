/**
 * Salesforce, as an OpenID Connect provider: https://help.salesforce.com/s/articleView?id=sf.remoteaccess_using_openid_discovery_endpoint.htm
 * (issuer https://login.salesforce.com, https://test.salesforce.com for sandboxes, or an org's My
 * Domain; userinfo's `email_verified`). `instance_url` replaces the issuer (allauth keeps this
 * login URL in the app's key). The uid is `sub` (the user's identity URL, which names the org and
 * the user); an app migrated from allauth, whose uids are the bare user ids, sets
 * uid_field: "user_id", which Salesforce's userinfo also carries.
 */
import type { ProviderKind } from '../kind.js';
import { namedOpenIdConnectKind } from '../named-openid-connect.js';
import { aUrlText, withoutTokenLogin } from './oidc-kinds.js';

export const SALESFORCE_ISSUER = 'https://login.salesforce.com';

export const salesforceProviderKind: ProviderKind = withoutTokenLogin(namedOpenIdConnectKind({
  type: 'salesforce',
  name: 'Salesforce',
  issuer: (settings) => {
    if (settings.instance_url === undefined) return SALESFORCE_ISSUER;
    const read = aUrlText(settings.instance_url, 'instance_url');
    return 'problem' in read ? { key: 'instance_url', reason: 'invalid', message: read.problem } : read.value;
  },
  settingsReaders: { instance_url: aUrlText },
  // allauth asks for `id` and `openid`; profile and email are Salesforce's OpenID Connect scopes for the claims a signup uses.
  defaultScope: ['openid', 'profile', 'email'],
}));
