/**
 * Stack Exchange (Stack Overflow and its sister sites), as allauth's `stackexchange` provider.
 * Shapes follow https://api.stackexchange.com/docs/authentication (the explicit flow: /oauth,
 * /oauth/access_token answering `access_token=...&expires=...` form-encoded) and
 * https://api.stackexchange.com/docs/me (a wrapper whose `items` holds the user).
 *
 * The API reads the access token and the app's request key from the query string only (it has no
 * Authorization header scheme), so they travel there, as the documentation prescribes. The key
 * is the app's `key` field; the site (`site`, SITE provider-wide) is stackoverflow unless said.
 * The uid is account_id, the same on every site, not user_id, which differs per site (allauth's
 * choice). Stack Exchange gives no email address.
 */
import { aText } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type OAuth2ProviderDescription } from '../oauth2.js';
import { readJsonObject } from '../oauth2-requests.js';
import { textOf } from '../profile-fields.js';
import { ProviderError } from '../provider.js';

function stackExchangeDescription(requestKey: string): OAuth2ProviderDescription & { name: string } {
  return {
    type: 'stackexchange',
    name: 'Stack Exchange',
    authorizeUrl: 'https://stackexchange.com/oauth',
    accessTokenUrl: 'https://stackexchange.com/oauth/access_token',
    endpointValues: (settings) => ({
      profile_url: typeof settings.profile_url === 'string' ? settings.profile_url : 'https://api.stackexchange.com/2.3/me',
      site: typeof settings.site === 'string' ? settings.site : 'stackoverflow',
    }),
    settingsReaders: { site: aText },
    defaultScope: [],
    async fetchProfile({ accessToken, requests, values }) {
      const url = new URL(values.profile_url!);
      url.searchParams.set('site', values.site!);
      url.searchParams.set('access_token', accessToken);
      if (requestKey !== '') url.searchParams.set('key', requestKey);
      const answer = readJsonObject('stackexchange', 'the /me answer', await requests.getJson(url));
      const [user] = Array.isArray(answer.items) ? (answer.items as unknown[]) : [];
      if (user === undefined) throw new ProviderError('failed', 'stackexchange: the /me answer holds no user (is the account on this site?)');
      return readJsonObject('stackexchange', 'the /me item', user);
    },
    profile(json) {
      return { uid: json.account_id, emails: [], data: { username: textOf(json.display_name) } };
    },
  };
}

const keyless = oauth2ProviderKind(stackExchangeDescription(''));

/** The request key is the app's `key` field, so each app gets a description of its own. */
export const stackExchangeProviderKind: ProviderKind = {
  id: keyless.id,
  name: keyless.name,
  checkSettings: (settings) => keyless.checkSettings(settings),
  // Without its request key the API answers every profile request with an error: refused at start-up instead.
  checkApp: (app) => (app.key.trim() === '' ? { key: 'key', reason: 'required', message: "a key is required for stackexchange (the app's request key, shown on its Stack Apps page)" } : undefined),
  build: (app, context) => oauth2ProviderKind(stackExchangeDescription(app.key)).build(app, context),
};
