/**
 * X (Twitter) with OAuth 2.0, as allauth's `twitter_oauth2` provider. Shapes follow
 * https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/authorization-code (authorize
 * and token, PKCE required) and https://docs.x.com/x-api/users/user-lookup-me (/2/users/me, whose
 * user is wrapped in `data`).
 *
 * X gives no email address through this API, so a new person always goes through the signup form
 * (or gives an address there) rather than being matched to anyone by address.
 */
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind } from '../oauth2.js';
import { readJsonObject } from '../oauth2-requests.js';
import { textOf } from '../profile-fields.js';

export const twitterOAuth2ProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'twitter_oauth2',
  name: 'X',
  authorizeUrl: 'https://x.com/i/oauth2/authorize',
  accessTokenUrl: 'https://api.x.com/2/oauth2/token',
  profileUrl: 'https://api.x.com/2/users/me?user.fields=id,name,username,profile_image_url,verified,created_at',
  defaultScope: ['users.read', 'tweet.read'],
  // X refuses an authorization request without a code_challenge.
  pkceEnabledDefault: true,
  // A confidential client authenticates with HTTP Basic at the token endpoint.
  clientAuthentication: 'client_secret_basic',
  profile(json) {
    const user = readJsonObject('twitter_oauth2', "the profile's data", json.data);
    return {
      uid: user.id,
      emails: [],
      data: { username: textOf(user.username), name: textOf(user.name) },
      extraData: user,
    };
  },
});
