/**
 * Dropbox, as allauth's `dropbox` provider. Shapes follow the Dropbox HTTP API documentation:
 * "OAuth Guide" (https://developers.dropbox.com/oauth-guide) and "users/get_current_account"
 * (https://www.dropbox.com/developers/documentation/http/documentation#users-get_current_account),
 * an RPC endpoint that answers only a POST whose body is the JSON `null`.
 */
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type MappedProfile } from '../oauth2.js';
import { textOf } from '../profile-fields.js';

const CURRENT_ACCOUNT = 'https://api.dropboxapi.com/2/users/get_current_account';

/** Dropbox says whether it verified the address (`email_verified`); only `true` counts. */
function dropboxProfile(json: Record<string, unknown>): MappedProfile {
  const email = textOf(json.email);
  const name = typeof json.name === 'object' && json.name !== null ? (json.name as Record<string, unknown>) : {};
  return {
    uid: json.account_id,
    emails: email === undefined ? [] : [{ email, verified: json.email_verified === true, primary: true }],
    data: { email, name: textOf(name.display_name), firstName: textOf(name.given_name), lastName: textOf(name.surname) },
  };
}

export const dropboxProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'dropbox',
  name: 'Dropbox',
  authorizeUrl: 'https://www.dropbox.com/oauth2/authorize',
  accessTokenUrl: 'https://api.dropboxapi.com/oauth2/token',
  // Dropbox grants what the app's permissions page allows; the account needs no scope.
  defaultScope: [],
  // The app's profile_url setting replaces the RPC endpoint (a fixture server, a proxy).
  fetchProfile: async ({ requests, values }) => (await requests.postJson(values.profile_url ?? CURRENT_ACCOUNT, { body: null })) as Record<string, unknown>,
  endpointValues: (settings): Record<string, string> => (typeof settings.profile_url === 'string' ? { profile_url: settings.profile_url } : {}),
  profile: dropboxProfile,
});
