/**
 * Bitbucket Cloud, as allauth's `bitbucket_oauth2` provider. Shapes follow
 * https://developer.atlassian.com/cloud/bitbucket/oauth-2/ (authorize, the token endpoint with the
 * consumer's key and secret as HTTP Basic, a JSON answer) and
 * https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/ (/2.0/user, and
 * /2.0/user/emails: a page of `values` with is_primary and is_confirmed).
 *
 * The uid is the Atlassian account_id (the user's uuid when an account has none), not the username
 * allauth uses: a Bitbucket username can be changed and then taken by someone else, who would
 * inherit the sign-in. An address is verified only when Bitbucket says is_confirmed true.
 * Settings: `api_url` replaces the API base (https://api.bitbucket.org/2.0) whole.
 */
import { anEndpoint } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type ProfileInput } from '../oauth2.js';
import { readJsonObject } from '../oauth2-requests.js';
import { isVouchedFor, textOf } from '../profile-fields.js';
import type { ProviderEmail } from '../provider.js';

/** /2.0/user, then the addresses; a consumer without the email permission gets a 404 there, and signs in without one. */
async function fetchProfile({ requests, values }: ProfileInput): Promise<Record<string, unknown>> {
  const user = readJsonObject('bitbucket_oauth2', 'the /user answer', await requests.getJson(values.profile_url ?? `${values.api_url}/user`));
  const page = await requests.getJson(`${values.api_url}/user/emails`, { optional: true });
  const listed = typeof page === 'object' && page !== null && Array.isArray((page as Record<string, unknown>).values) ? ((page as Record<string, unknown>).values as unknown[]) : [];
  return { ...user, emails: listed };
}

function addressesOf(list: unknown): ProviderEmail[] {
  const addresses: ProviderEmail[] = [];
  for (const entry of Array.isArray(list) ? list : []) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { email, is_confirmed: confirmed, is_primary: primary } = entry as Record<string, unknown>;
    const address = textOf(email);
    if (address !== undefined) addresses.push({ email: address, verified: isVouchedFor(confirmed), primary: primary === true });
  }
  return addresses;
}

export const bitbucketOAuth2ProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'bitbucket_oauth2',
  name: 'Bitbucket',
  authorizeUrl: 'https://bitbucket.org/site/oauth2/authorize',
  accessTokenUrl: 'https://bitbucket.org/site/oauth2/access_token',
  endpointValues(settings) {
    const values: Record<string, string> = { api_url: (typeof settings.api_url === 'string' ? settings.api_url : 'https://api.bitbucket.org/2.0').replace(/\/+$/, '') };
    if (typeof settings.profile_url === 'string') values.profile_url = settings.profile_url;
    return values;
  },
  settingsReaders: { api_url: anEndpoint },
  fetchProfile,
  // The scopes are the consumer's permissions, set in Bitbucket's settings, not asked for here.
  defaultScope: [],
  clientAuthentication: 'client_secret_basic',
  profile(json) {
    const emails = addressesOf(json.emails);
    const { emails: _list, ...extraData } = json;
    const primary = emails.find((entry) => entry.primary) ?? emails[0];
    return {
      uid: textOf(json.account_id) ?? textOf(json.uuid),
      emails,
      data: { email: primary?.email, username: textOf(json.username) ?? textOf(json.nickname), name: textOf(json.display_name) },
      extraData,
    };
  },
});
