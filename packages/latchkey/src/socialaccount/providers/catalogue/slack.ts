/**
 * Sign in with Slack, Slack's OpenID Connect provider: https://api.slack.com/authentication/sign-in-with-slack
 * (discovery at https://slack.com/.well-known/openid-configuration; scopes openid, profile, email;
 * the claims carry `email_verified` and the workspace as https://slack.com/team_id). The uid is
 * `sub`, the person's Slack user id.
 */
import type { ProviderKind } from '../kind.js';
import { namedOpenIdConnectKind } from '../named-openid-connect.js';
import { withoutTokenLogin } from './oidc-kinds.js';

export const slackProviderKind: ProviderKind = withoutTokenLogin(namedOpenIdConnectKind({
  type: 'slack',
  name: 'Slack',
  issuer: () => 'https://slack.com',
  defaultScope: ['openid', 'profile', 'email'],
}));
