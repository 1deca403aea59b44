/**
 * What the admin does to sessions (Django's sessions.Session, allauth.usersessions' UserSession
 * admin): end one, or every one of a user's. Each is checked against the actor's rights here, not
 * only by the page: the 'delete' permission of sessions, and the user must be one the staff member
 * may act on (access.ts, requireMayActOn: never a superuser, nor staff who hold more).
 * Each ending joins the audit trail against the staff member, with the user in its data.
 */
import type { User } from '../../account/model.js';
import type { ClientInfo } from '../../core/client.js';
import { LatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import type { LatchkeyDeps } from '../../deps.js';
import { requireAdminPermission, requireMayActOn } from '../access.js';

export const SESSION_NOT_FOUND = msg('This session has ended already.');

/**
 * Ends one signed-in session, named by its id hash (the admin never sees the id itself). Returns
 * whose it was; 'not_found' when no signed-in session has this hash.
 */
export async function endSessionByAdmin(deps: Pick<LatchkeyDeps, 'store' | 'sessions' | 'events'>, actor: User, idHash: string, client: ClientInfo): Promise<User> {
  const granted = await requireAdminPermission(deps, actor, 'sessions.session', 'delete');
  const session = await deps.store.sessions.find(idHash);
  const target = session?.userId == null ? undefined : await deps.store.users.findById(session.userId);
  if (!session || !target) throw new LatchkeyError('not_found', SESSION_NOT_FOUND);
  await requireMayActOn(deps, granted, target);
  await deps.sessions.end(session);
  await deps.events.emit('admin_user_changed', actor.id, client, { target: target.id, change: 'session_ended' });
  return target;
}

/**
 * "Sign out everywhere": ends every session of the user; returns how many. The one flow behind
 * both buttons, the sessions list's and the user's change page's, with one permission: ending a
 * session is deleting it, so it takes the 'delete' permission of sessions (Django's admin asks
 * `sessions.delete_session` to delete Session rows), not the right to change the user's fields.
 */
export async function endUserSessionsByAdmin(deps: Pick<LatchkeyDeps, 'store' | 'sessions' | 'events'>, actor: User, target: User, client: ClientInfo): Promise<number> {
  await requireMayActOn(deps, await requireAdminPermission(deps, actor, 'sessions.session', 'delete'), target);
  const ended = await deps.sessions.endAll(target.id);
  await deps.events.emit('admin_user_changed', actor.id, client, { target: target.id, change: 'sessions_ended', count: ended });
  return ended;
}
