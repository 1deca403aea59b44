/**
 * LinkedIn's "Sign In with LinkedIn using OpenID Connect":
 * https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
 * (discovery at https://www.linkedin.com/oauth/.well-known/openid-configuration; scopes openid,
 * profile, email; userinfo's `email_verified`). The id is allauth's, `linkedin_oauth2`, and so are
 * its URLs: /accounts/linkedin_oauth2/login/. The server is described once, in linkedin.ts.
 */
import type { ProviderKind } from '../kind.js';
import { linkedInKind } from './linkedin.js';

export const linkedinOAuth2ProviderKind: ProviderKind = linkedInKind('linkedin_oauth2');
