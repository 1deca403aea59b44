/**
 * What the admin does to API tokens (Django REST framework's TokenProxy admin): make one for a
 * user, showing its key once, and delete one. DRF keeps one token per user, and so does Latchkey
 * (tokens/api-tokens.ts): a user who has one is refused a second rather than handed the key they
 * have, so that the admin never shows a key that is already in use. Each change is checked against
 * the actor's rights here, not only by the page, and only for a user the staff member may act on
 * (access.ts, requireMayActOn: never a superuser, nor staff who hold more), since a token signs in
 * to the API as its user. The token's own events (api_token_created,
 * api_token_deleted) are recorded against its user by the token flows; the admin's change joins the
 * audit trail against the staff member, with the user in its data.
 */
import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import type { User } from '../../account/model.js';
import type { ClientInfo } from '../../core/client.js';
import { normalizeUsernameKey, tryNormalizeEmail } from '../../core/identifiers.js';
import { LatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import type { LatchkeyDeps } from '../../deps.js';
import { deleteApiToken, issueApiToken } from '../../tokens/api-tokens.js';
import { requireAdminPermission, requireMayActOn } from '../access.js';

export const TOKEN_EXISTS = msg('This user already has a token, and Django REST framework keeps one per user: delete it first to make a new one.');
export const NO_SUCH_USER = msg('No user has this username or email address.');
export const SEVERAL_USERS = msg('Several users have this email address: type the username instead.');
export const TOKEN_NOT_FOUND = msg('This user has no token.');

/**
 * The user a staff member typed: a username (where the project has them) or an email address. In
 * a username project several accounts may share an address; it then names one only when a single
 * account has it. Refused ('invalid_input' on the field `user`) when it names nobody.
 */
export async function findUserTypedByStaff(deps: Pick<LatchkeyDeps, 'settings' | 'store'>, typed: string): Promise<User> {
  const text = typed.trim();
  // Longer than any address or username: not worth a query.
  if (text === '' || text.length > 320) throw new LatchkeyError('invalid_input', NO_SUCH_USER, { param: 'user' });
  const { users, emailAddresses } = deps.store;
  if (deps.settings.USERNAME_TYPE === 'username') {
    const byUsername = await users.findByUsername(normalizeUsernameKey(text));
    if (byUsername) return byUsername;
  }
  const email = text.includes('@') ? tryNormalizeEmail(text) : undefined;
  if (email !== undefined) {
    if (deps.settings.USERNAME_TYPE === 'email') {
      const user = await users.findByEmail(email);
      if (user) return user;
    } else {
      const holders = [...new Set((await emailAddresses.listByEmail(email)).map((address) => address.userId))];
      if (holders.length > 1) throw new LatchkeyError('invalid_input', SEVERAL_USERS, { param: 'user' });
      const user = holders[0] === undefined ? await users.findByEmail(email) : await users.findById(holders[0]);
      if (user) return user;
    }
  }
  throw new LatchkeyError('invalid_input', NO_SUCH_USER, { param: 'user' });
}

/**
 * Makes a token for the user the staff member typed and returns its key, for the admin to show
 * this once: it is never shown again (only a hash and a sealed copy are stored). A key signs in
 * as its user, so making one needs a recent sign-in ('reauthentication_required'). Refused
 * ('invalid_input' on `user`) when the user already has one. A token made by a parallel request
 * between the check and the creation is the one case where the key handed back is that token's
 * (issueApiToken's rule: one token per user, the same key to everyone who asked).
 */
export async function createApiTokenByAdmin(
  deps: LatchkeyDeps,
  actor: User,
  typedUser: string,
  client: ClientInfo,
  lastAuthenticatedAt: Date | undefined,
): Promise<{ user: User; key: string }> {
  const granted = await requireAdminPermission(deps, actor, 'authtoken.tokenproxy', 'add');
  requireRecentAuthentication(deps, lastAuthenticatedAt);
  const user = await findUserTypedByStaff(deps, typedUser);
  await requireMayActOn(deps, granted, user);
  if (await deps.store.apiTokens.findForUser(user.id)) throw new LatchkeyError('invalid_input', TOKEN_EXISTS, { param: 'user' });
  const key = await issueApiToken(deps, user, client);
  await deps.events.emit('admin_user_changed', actor.id, client, { target: user.id, change: 'api_token_created' });
  return { user, key };
}

/** Deletes the user's token: every copy of its key stops working at once. 'not_found' when there is none. */
export async function deleteApiTokenByAdmin(deps: Pick<LatchkeyDeps, 'store' | 'events'>, actor: User, target: User, client: ClientInfo): Promise<void> {
  await requireMayActOn(deps, await requireAdminPermission(deps, actor, 'authtoken.tokenproxy', 'delete'), target);
  if (!(await deleteApiToken(deps, target, client))) throw new LatchkeyError('not_found', TOKEN_NOT_FOUND);
  await deps.events.emit('admin_user_changed', actor.id, client, { target: target.id, change: 'api_token_deleted' });
}
