/**
 * LinkedIn as allauth configures it today: "Sign In with LinkedIn using OpenID Connect"
 * (https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2:
 * discovery at https://www.linkedin.com/oauth/.well-known/openid-configuration, scopes openid,
 * profile and email, userinfo's `email_verified`). allauth's docs
 * (https://docs.allauth.org/en/latest/socialaccount/providers/linkedin.html) deprecate
 * linkedin_oauth2 and set LinkedIn up as an OpenID Connect app whose provider_id is `linkedin`, so
 * its social accounts are stored as `linkedin`; this kind keeps that id without the server_url.
 *
 * Its URLs are /accounts/linkedin/login/ and its callback; an app moved from allauth's
 * openid_connect setup (whose callback is /accounts/oidc/linkedin/login/callback/) either adds this
 * callback URL in LinkedIn's developer portal or stays an openid_connect app with provider_id
 * `linkedin`, which works unchanged. linkedin_oauth2 (linkedin-oauth2.ts) is the same OpenID Connect
 * server under allauth's older id.
 */
import type { ProviderKind } from '../kind.js';
import { namedOpenIdConnectKind } from '../named-openid-connect.js';
import { withoutTokenLogin } from './oidc-kinds.js';

/** LinkedIn's OpenID Connect server under one of allauth's two ids. */
export function linkedInKind(type: 'linkedin' | 'linkedin_oauth2'): ProviderKind {
  return withoutTokenLogin(namedOpenIdConnectKind({ type, name: 'LinkedIn', issuer: () => 'https://www.linkedin.com/oauth', defaultScope: ['openid', 'profile', 'email'] }));
}

export const linkedinProviderKind: ProviderKind = linkedInKind('linkedin');
