/**
 * Reddit, as allauth's `reddit` provider. Shapes follow https://github.com/reddit-archive/reddit/wiki/OAuth2
 * (authorize with `duration`, the token endpoint with HTTP Basic client authentication) and
 * https://www.reddit.com/dev/api/#GET_api_v1_me (the profile), whose API rules ask every client
 * for a User-Agent of its own: https://github.com/reddit-archive/reddit/wiki/API.
 *
 * The uid is the account's `name`, as allauth keeps it (a Reddit username is never changed nor
 * given to anyone else), so that accounts carried over from allauth still match. Reddit gives no
 * email address.
 */
import { aText } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind } from '../oauth2.js';
import { readJsonObject } from '../oauth2-requests.js';
import { textOf } from '../profile-fields.js';

/** Reddit throttles, and may refuse, clients that send a generic User-Agent: a project should set its own. */
const DEFAULT_USER_AGENT = 'web:latchkey-social-sign-in:1.0';
const PROFILE_URL = 'https://oauth.reddit.com/api/v1/me';

export const redditProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'reddit',
  name: 'Reddit',
  // A permanent grant comes with a refresh token; an app's auth_params may ask for `temporary` instead.
  authorizeUrl: 'https://www.reddit.com/api/v1/authorize?duration=permanent',
  accessTokenUrl: 'https://www.reddit.com/api/v1/access_token',
  defaultScope: ['identity'],
  clientAuthentication: 'client_secret_basic',
  settingsReaders: { user_agent: aText },
  // Not placeholders: the profile's own settings, handed to fetchProfile with the endpoint values.
  endpointValues: (settings) => ({
    user_agent: typeof settings.user_agent === 'string' ? settings.user_agent : DEFAULT_USER_AGENT,
    profile_url: typeof settings.profile_url === 'string' ? settings.profile_url : PROFILE_URL,
  }),
  // Every request, the token exchange included, identifies the client as Reddit's API rules ask.
  tokenHeaders: (values) => ({ 'user-agent': values.user_agent! }),
  async fetchProfile({ requests, values }) {
    const answer = await requests.getJson(values.profile_url!, { headers: { 'user-agent': values.user_agent! } });
    return readJsonObject('reddit', 'the profile', answer);
  },
  profile(json) {
    return { uid: json.name, emails: [], data: { username: textOf(json.name), name: textOf(json.name) } };
  },
});
