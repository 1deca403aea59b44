/**
 * Notion, as allauth's `notion` provider. Shapes follow Notion's developer documentation,
 * "Authorization" (https://developers.notion.com/docs/authorization) and "Create a token"
 * (https://developers.notion.com/reference/create-a-token): the token answer itself names the
 * person (`owner.user`) and the workspace they granted; there is no profile request.
 */
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type MappedProfile, type ProfileInput } from '../oauth2.js';
import { readJsonObject } from '../oauth2-requests.js';
import { textOf } from '../profile-fields.js';

/** The token answer's description of the grant, without its tokens (they must not end up in extra_data). */
function notionGrant({ tokenAnswer }: ProfileInput): Promise<Record<string, unknown>> {
  const { owner, workspace_id, workspace_name, workspace_icon, bot_id } = tokenAnswer;
  return Promise.resolve({ owner, workspace_id, workspace_name, workspace_icon, bot_id });
}

/**
 * The uid is allauth's, the user and the workspace together (`user-<id>_workspace-<id>`): a grant
 * is to one workspace, and a project moving from allauth keeps its links. Notion does not say
 * whether the address was verified, so it is kept unverified (allauth trusts it; Latchkey only
 * trusts what the provider vouches for).
 */
function notionProfile(json: Record<string, unknown>): MappedProfile {
  const owner = readJsonObject('notion', 'the token answer’s owner', json.owner);
  if (owner.type !== 'user') throw new Error('the integration is owned by a workspace, not a person (ask for owner=user)');
  const user = readJsonObject('notion', 'the owner’s user', owner.user);
  const person = typeof user.person === 'object' && user.person !== null ? (user.person as Record<string, unknown>) : {};
  const userId = textOf(user.id);
  const workspaceId = textOf(json.workspace_id);
  const email = textOf(person.email);
  return {
    uid: userId === undefined || workspaceId === undefined ? undefined : `user-${userId}_workspace-${workspaceId}`,
    emails: email === undefined ? [] : [{ email, verified: false, primary: true }],
    data: { email, name: textOf(user.name) },
  };
}

export const notionProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'notion',
  name: 'Notion',
  // owner=user asks for a public integration granted by a person, whose details the answer then carries.
  authorizeUrl: 'https://api.notion.com/v1/oauth/authorize?owner=user',
  accessTokenUrl: 'https://api.notion.com/v1/oauth/token',
  fetchProfile: notionGrant,
  // Notion has no scopes: the person picks the pages to share on its consent screen.
  defaultScope: [],
  clientAuthentication: 'client_secret_basic',
  profile: notionProfile,
});
