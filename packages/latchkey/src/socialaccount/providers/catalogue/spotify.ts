/**
 * Spotify, as allauth's `spotify` provider. Shapes follow Spotify for Developers, "Authorization
 * Code Flow" (https://developer.spotify.com/documentation/web-api/tutorials/code-flow) and "Get
 * Current User's Profile" (https://developer.spotify.com/documentation/web-api/reference/get-current-users-profile).
 */
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type MappedProfile } from '../oauth2.js';
import { textOf } from '../profile-fields.js';

/** Spotify does not say whether the address was verified: it is kept, unverified. */
function spotifyProfile(json: Record<string, unknown>): MappedProfile {
  const email = textOf(json.email);
  return {
    uid: json.id,
    emails: email === undefined ? [] : [{ email, verified: false, primary: true }],
    data: { email, name: textOf(json.display_name) },
  };
}

export const spotifyProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'spotify',
  name: 'Spotify',
  authorizeUrl: 'https://accounts.spotify.com/authorize',
  accessTokenUrl: 'https://accounts.spotify.com/api/token',
  profileUrl: 'https://api.spotify.com/v1/me',
  // The profile carries the address only under this scope.
  defaultScope: ['user-read-email'],
  // Spotify's token endpoint takes the client's credentials in a Basic header.
  clientAuthentication: 'client_secret_basic',
  profile: spotifyProfile,
});
