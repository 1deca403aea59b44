/**
 * The providers that are OpenID Connect identity providers at a known address (named-openid-connect.ts),
 * and Amazon Cognito, whose hosted UI is reached through its OAuth 2.0 endpoints.
 */
import type { ProviderKind } from '../kind.js';
import { amazonCognitoProviderKind } from './amazon-cognito.js';
import { auth0ProviderKind } from './auth0.js';
import { googleProviderKind } from './google.js';
import { keycloakProviderKind } from './keycloak.js';
import { linkedinProviderKind } from './linkedin.js';
import { linkedinOAuth2ProviderKind } from './linkedin-oauth2.js';
import { oktaProviderKind } from './okta.js';
import { salesforceProviderKind } from './salesforce.js';
import { slackProviderKind } from './slack.js';

export const OPENID_CONNECT_BASED_PROVIDER_KINDS: readonly ProviderKind[] = [
  googleProviderKind,
  slackProviderKind,
  linkedinProviderKind,
  linkedinOAuth2ProviderKind,
  oktaProviderKind,
  auth0ProviderKind,
  keycloakProviderKind,
  salesforceProviderKind,
  amazonCognitoProviderKind,
];
