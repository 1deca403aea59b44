/**
 * Strava, as allauth's `strava` provider. Shapes follow Strava's developer documentation,
 * "Authentication" (https://developers.strava.com/docs/authentication/) and the API reference
 * "Get Authenticated Athlete" (https://developers.strava.com/docs/reference/#api-Athletes-getLoggedInAthlete).
 */
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type MappedProfile } from '../oauth2.js';
import { textOf } from '../profile-fields.js';

/** Strava never gives an address: signup asks for one. */
function stravaProfile(json: Record<string, unknown>): MappedProfile {
  const firstName = textOf(json.firstname);
  const lastName = textOf(json.lastname);
  return {
    uid: json.id,
    emails: [],
    data: { username: textOf(json.username), firstName, lastName, name: [firstName, lastName].filter(Boolean).join(' ') || undefined },
  };
}

export const stravaProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'strava',
  name: 'Strava',
  authorizeUrl: 'https://www.strava.com/oauth/authorize',
  accessTokenUrl: 'https://www.strava.com/oauth/token',
  profileUrl: 'https://www.strava.com/api/v3/athlete',
  defaultScope: ['read', 'activity:read'],
  // Strava separates scopes with commas, not spaces.
  scopeDelimiter: ',',
  profile: stravaProfile,
});
