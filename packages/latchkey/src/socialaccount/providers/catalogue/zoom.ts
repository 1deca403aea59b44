/**
 * Zoom, as allauth's `zoom` provider. Shapes follow Zoom's developer documentation, "OAuth for
 * user authorized apps" (https://developers.zoom.us/docs/integrations/oauth/) and the Users API
 * "Get a user" with `me` (https://developers.zoom.us/docs/api/users/#tag/users/GET/users/{userId}).
 */
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type MappedProfile } from '../oauth2.js';
import { textOf } from '../profile-fields.js';

/**
 * Zoom's `verified` is a number: 1 when the account's address is verified, 0 when not. Only 1
 * (or a plain true) vouches; anything else keeps the address unverified.
 */
function zoomProfile(json: Record<string, unknown>): MappedProfile {
  const email = textOf(json.email);
  const firstName = textOf(json.first_name);
  const lastName = textOf(json.last_name);
  return {
    uid: json.id,
    emails: email === undefined ? [] : [{ email, verified: json.verified === 1 || json.verified === true, primary: true }],
    data: { email, firstName, lastName, name: textOf(json.display_name) ?? ([firstName, lastName].filter(Boolean).join(' ') || undefined) },
  };
}

export const zoomProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'zoom',
  name: 'Zoom',
  authorizeUrl: 'https://zoom.us/oauth/authorize',
  accessTokenUrl: 'https://zoom.us/oauth/token',
  profileUrl: 'https://api.zoom.us/v2/users/me',
  // As allauth: no scope is asked for, so Zoom grants those the app is configured with.
  defaultScope: [],
  clientAuthentication: 'client_secret_basic',
  profile: zoomProfile,
});
