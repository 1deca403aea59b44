/**
 * Google, as an OpenID Connect provider: https://developers.google.com/identity/openid-connect/openid-connect
 * (discovery at https://accounts.google.com/.well-known/openid-configuration; `sub` is the stable
 * id; `email_verified` says whether Google vouches for the address). A refresh token comes only
 * with `access_type=offline`, which an app asks for with auth_params (or the provider-wide
 * AUTH_PARAMS): {"access_type": "offline"}. Google is one of the providers whose ID tokens a mobile
 * app may hand over for a headless token login, verified against Google's keys.
 *
 * Google signs ID tokens under two names: "The value of iss in the ID token is equal to
 * accounts.google.com or https://accounts.google.com"
 * (https://developers.google.com/identity/openid-connect/openid-connect#validatinganidtoken), while
 * its discovery names only the second. Both are taken, in the redirect flow and in token logins;
 * any other issuer is refused. For a server_url that replaces the issuer (a proxy, a fixture), the
 * second name is that URL without its scheme, as accounts.google.com is Google's.
 */
import type { ProviderKind } from '../kind.js';
import { namedOpenIdConnectKind } from '../named-openid-connect.js';

export const GOOGLE_ISSUER = 'https://accounts.google.com';

export const googleProviderKind: ProviderKind = namedOpenIdConnectKind({
  type: 'google',
  name: 'Google',
  issuer: () => GOOGLE_ISSUER,
  defaultScope: ['openid', 'profile', 'email'],
  issuerAlsoNamed: (issuer) => [issuer.replace(/^https?:\/\//, '')],
});
