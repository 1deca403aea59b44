/**
 * Figma, as allauth's `figma` provider. Shapes follow Figma's developer documentation, "OAuth
 * apps" (https://developers.figma.com/docs/rest-api/oauth-apps/) and the REST API's "Users"
 * endpoint GET /v1/me (https://developers.figma.com/docs/rest-api/users-endpoints/).
 */
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type MappedProfile } from '../oauth2.js';
import { textOf } from '../profile-fields.js';

/** Figma does not say whether the address was verified: it is kept, unverified, as allauth. */
function figmaProfile(json: Record<string, unknown>): MappedProfile {
  const email = textOf(json.email);
  return {
    uid: json.id,
    emails: email === undefined ? [] : [{ email, verified: false, primary: true }],
    data: { email, name: textOf(json.handle) },
  };
}

export const figmaProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'figma',
  name: 'Figma',
  authorizeUrl: 'https://www.figma.com/oauth',
  accessTokenUrl: 'https://api.figma.com/v1/oauth/token',
  profileUrl: 'https://api.figma.com/v1/me',
  // The scope GET /v1/me needs; nothing more is asked for a sign-in.
  defaultScope: ['current_user:read'],
  clientAuthentication: 'client_secret_basic',
  profile: figmaProfile,
});
