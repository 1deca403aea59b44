/**
 * Twitch, as allauth's `twitch` provider. Shapes follow Twitch's developer documentation,
 * "Getting OAuth Access Tokens" (https://dev.twitch.tv/docs/authentication/getting-tokens-oauth/)
 * and the Helix API reference "Get Users" (https://dev.twitch.tv/docs/api/reference/#get-users).
 */
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type MappedProfile, type ProfileInput } from '../oauth2.js';
import { readJsonObject } from '../oauth2-requests.js';
import { textOf } from '../profile-fields.js';

const USERS_URL = 'https://api.twitch.tv/helix/users';

/**
 * Helix answers only requests that name the app in a Client-Id header besides the token; the
 * header is the app's client id, so it cannot be a fixed profileHeaders entry. Without an id or
 * login, Get Users describes the token's owner, as a list of one.
 */
async function fetchTwitchUser({ requests, values, client }: ProfileInput): Promise<Record<string, unknown>> {
  const answer = readJsonObject('twitch', 'the Get Users answer', await requests.getJson(values.profile_url ?? USERS_URL, { headers: { 'client-id': client.id } }));
  const users = answer.data;
  if (!Array.isArray(users) || users.length !== 1) throw new Error('the Get Users answer does not list exactly one user');
  return readJsonObject('twitch', 'the user', users[0]);
}

/** Twitch does not say whether the address was verified: it is kept, unverified. */
function twitchProfile(json: Record<string, unknown>): MappedProfile {
  const email = textOf(json.email);
  return {
    uid: json.id,
    emails: email === undefined ? [] : [{ email, verified: false, primary: true }],
    data: { email, username: textOf(json.login), name: textOf(json.display_name) },
  };
}

export const twitchProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'twitch',
  name: 'Twitch',
  authorizeUrl: 'https://id.twitch.tv/oauth2/authorize',
  accessTokenUrl: 'https://id.twitch.tv/oauth2/token',
  // Declared so the base checks it like any endpoint; fetchTwitchUser reads it through the values.
  profileUrl: USERS_URL,
  // The app's profile_url, when it gives one, replaces the users endpoint (a proxy, a test server).
  endpointValues: (settings): Record<string, string> => (typeof settings.profile_url === 'string' ? { profile_url: settings.profile_url } : {}),
  fetchProfile: fetchTwitchUser,
  defaultScope: ['user:read:email'],
  profile: twitchProfile,
});
