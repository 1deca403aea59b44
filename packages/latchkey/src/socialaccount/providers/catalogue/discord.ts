/**
 * Discord, as allauth's `discord` provider. Shapes follow Discord's developer documentation,
 * "OAuth2" (https://discord.com/developers/docs/topics/oauth2) and "Users Resource / Get Current
 * User" (https://discord.com/developers/docs/resources/user#get-current-user).
 */
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type MappedProfile } from '../oauth2.js';
import { textOf } from '../profile-fields.js';

/**
 * The address is kept only when Discord says it has verified it (`verified: true`), and is then
 * taken as verified: an unverified Discord address proves nothing about who holds the mailbox,
 * and keeping it even as unverified would offer it to signup as if it were the person's.
 */
function discordProfile(json: Record<string, unknown>): MappedProfile {
  const email = json.verified === true ? textOf(json.email) : undefined;
  const username = textOf(json.username);
  return {
    uid: json.id,
    emails: email === undefined ? [] : [{ email, verified: true, primary: true }],
    // global_name is the display name of Discord's new username system; older accounts may lack it.
    data: { email, username, name: textOf(json.global_name) ?? username },
  };
}

export const discordProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'discord',
  name: 'Discord',
  authorizeUrl: 'https://discord.com/api/oauth2/authorize',
  accessTokenUrl: 'https://discord.com/api/oauth2/token',
  profileUrl: 'https://discord.com/api/users/@me',
  defaultScope: ['email', 'identify'],
  profile: discordProfile,
});
