/**
 * Patreon, as allauth's `patreon` provider with its API v2. Shapes follow Patreon's API
 * documentation, "OAuth" and "GET /api/oauth2/v2/identity" (https://docs.patreon.com/#oauth and
 * https://docs.patreon.com/#get-api-oauth2-v2-identity): a JSON:API document whose `data` is the user.
 */
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type MappedProfile } from '../oauth2.js';
import { readJsonObject } from '../oauth2-requests.js';
import { isVouchedFor, textOf } from '../profile-fields.js';

/**
 * The user is `data`, its fields under `attributes` (only those asked for in fields[user]). The
 * address is verified only when Patreon says so in is_email_verified.
 */
function patreonProfile(json: Record<string, unknown>): MappedProfile {
  const user = readJsonObject('patreon', 'the identity’s data', json.data);
  const attributes = typeof user.attributes === 'object' && user.attributes !== null ? (user.attributes as Record<string, unknown>) : {};
  const email = textOf(attributes.email);
  return {
    uid: user.id,
    emails: email === undefined ? [] : [{ email, verified: isVouchedFor(attributes.is_email_verified), primary: true }],
    data: { email, username: textOf(attributes.vanity), name: textOf(attributes.full_name), firstName: textOf(attributes.first_name), lastName: textOf(attributes.last_name) },
    extraData: user,
  };
}

export const patreonProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'patreon',
  name: 'Patreon',
  authorizeUrl: 'https://www.patreon.com/oauth2/authorize',
  accessTokenUrl: 'https://www.patreon.com/api/oauth2/token',
  profileUrl: 'https://www.patreon.com/api/oauth2/v2/identity?fields%5Buser%5D=email,first_name,full_name,is_email_verified,last_name,vanity',
  // allauth's scopes for API v2; identity[email] is what puts the address in the answer.
  defaultScope: ['identity', 'identity[email]', 'campaigns', 'campaigns.members'],
  profile: patreonProfile,
});
