import type { ClientInfo } from '../../core/client.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { StoredSession } from '../../sessions/model.js';

/**
 * Signing out, through any door: the session ends on the server (its id or token is worthless
 * from now on, whoever holds a copy), and user_logged_out is recorded when the session was a
 * user's (a session that only held a stopped login or a flash message ends without one). The
 * adapter then has its client forget the session.
 */
export async function logOut(deps: Pick<LatchkeyDeps, 'sessions' | 'events'>, session: Pick<StoredSession, 'idHash' | 'userId'> | undefined, client: ClientInfo): Promise<void> {
  if (!session) return;
  await deps.sessions.end(session);
  if (session.userId !== null) await deps.events.emit('user_logged_out', session.userId, client);
}
