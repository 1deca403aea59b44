import type { User } from '../../account/model.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { StoredSession } from '../model.js';
import { publicSessionId } from '../public-id.js';

export interface EndSessionsInput {
  user: User;
  /** The public ids (public-id.ts) of the sessions to end, as the client was shown them. */
  ids: readonly number[];
  /** The session the request came in; undefined for none. */
  current: Pick<StoredSession, 'idHash'> | undefined;
}

/**
 * Ends some of the signed-in user's sessions. Only the user's own live sessions are candidates:
 * an id of anyone else's session, or of none, matches nothing, so the answer cannot be used to
 * probe for other people's sessions. The current session is not ended here: ending it is signing
 * out, which the adapter does (logOut) so that its client forgets the session too.
 */
export async function endSessions(deps: Pick<LatchkeyDeps, 'sessions'>, input: EndSessionsInput): Promise<{ ended: number; endsCurrent: boolean }> {
  const wanted = new Set(input.ids);
  const ending = (await deps.sessions.listForUser(input.user.id)).filter((session) => wanted.has(publicSessionId(session.idHash)));
  const currentIdHash = input.current?.idHash;
  for (const session of ending) if (session.idHash !== currentIdHash) await deps.sessions.end(session);
  return { ended: ending.length, endsCurrent: ending.some((session) => session.idHash === currentIdHash) };
}

/** Signs the user out everywhere but here ("sign out other sessions"); returns how many ended. */
export function endOtherSessions(deps: Pick<LatchkeyDeps, 'sessions'>, user: User, current: Pick<StoredSession, 'idHash'> | undefined): Promise<number> {
  return deps.sessions.endOthers(user.id, current);
}
