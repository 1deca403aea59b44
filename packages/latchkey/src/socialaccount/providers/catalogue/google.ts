/**
 * Google, as an OpenID Connect provider: https://developers.google.com/identity/openid-connect/openid-connect
 * (discovery at https://accounts.google.com/.well-known/openid-configuration; `sub` is the stable
 * id; `email_verified` says whether Google vouches for the address). A refresh token comes only
 * with `access_type=offline`, which an app asks for with auth_params (or the provider-wide
 * AUTH_PARAMS): {"access_type": "offline"}. Google is one of the providers whose ID tokens a mobile
 * app may hand over for a headless token login, verified against Google's keys.
 */
import type { ProviderKind } from '../kind.js';
import { namedOpenIdConnectKind } from '../named-openid-connect.js';

export const GOOGLE_ISSUER = 'https://accounts.google.com';

export const googleProviderKind: ProviderKind = namedOpenIdConnectKind({
  type: 'google',
  name: 'Google',
  issuer: () => GOOGLE_ISSUER,
  defaultScope: ['openid', 'profile', 'email'],
});
