/**
 * The named kinds Latchkey ships (allauth's provider ids and URLs), each enabled by its key in
 * SOCIALACCOUNT_PROVIDERS with an app in the settings or the database; none is configured until
 * then. Each is data (endpoints, scopes) plus a small profile mapper on the OAuth 2.0 base
 * (oauth2.ts) or the named OpenID Connect base (named-openid-connect.ts).
 */
import type { ProviderKind } from '../kind.js';
import { APPLE_PROVIDER_KINDS } from './apple.js';
import { APPS_AND_MEDIA_PROVIDER_KINDS } from './apps-and-media.js';
import { CODE_HOSTING_PROVIDER_KINDS } from './code-hosting.js';
import { NETWORKS_PROVIDER_KINDS } from './networks.js';
import { OPENID_CONNECT_BASED_PROVIDER_KINDS } from './openid-connect-based.js';

export const NAMED_PROVIDER_KINDS: readonly ProviderKind[] = [
  ...OPENID_CONNECT_BASED_PROVIDER_KINDS,
  ...CODE_HOSTING_PROVIDER_KINDS,
  ...NETWORKS_PROVIDER_KINDS,
  ...APPLE_PROVIDER_KINDS,
  ...APPS_AND_MEDIA_PROVIDER_KINDS,
];
