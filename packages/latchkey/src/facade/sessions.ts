import type { User } from '../account/model.js';
import type { LatchkeyDeps } from '../deps.js';
import { endSessions } from '../sessions/flows/end-sessions.js';
import { publicSessionId } from '../sessions/public-id.js';

/** One signed-in session as its owner is shown it (the sessions page, the headless API). */
export interface SessionSummary {
  /** The id the sessions page and the headless API show (never the cookie's value). */
  id: number;
  createdAt: Date;
  lastSeenAt: Date;
  /** The absolute end, whatever the activity. */
  expiresAt: Date;
  ipAddress: string;
  userAgent: string;
}

/** A session started by code: its cookie value, to set as SESSION_COOKIE_NAME. */
export interface StartedSession {
  cookieValue: string;
}

/** The project's way to the sessions people are signed in with. */
export interface LatchkeySessions {
  /** The user's live sessions, most recently seen first. */
  listForUser(user: Pick<User, 'id'>): Promise<SessionSummary[]>;
  /** Ends the user's sessions with these ids (others' ids match nothing); returns how many ended. */
  end(user: User, ids: readonly number[]): Promise<number>;
  /** Signs the user out everywhere; returns how many sessions ended. */
  endAll(user: Pick<User, 'id'>): Promise<number>;
  /**
   * A session signed in as the user without a login (Django's test client `force_login`): for a
   * project's tests and tools. No login stage runs, so never hand one to a person who has not
   * signed in.
   */
  startSignedIn(user: Pick<User, 'id'>): Promise<StartedSession>;
}

export function sessionsOf(deps: LatchkeyDeps): LatchkeySessions {
  return {
    async listForUser(user) {
      const sessions = await deps.sessions.listForUser(user.id);
      return sessions.map((session) => ({
        id: publicSessionId(session.idHash),
        createdAt: session.createdAt,
        lastSeenAt: session.lastSeenAt,
        expiresAt: session.expiresAt,
        ipAddress: session.ipAddress,
        userAgent: session.userAgent,
      }));
    },
    async end(user, ids) {
      return (await endSessions(deps, { user, ids, current: undefined })).ended;
    },
    endAll: (user) => deps.sessions.endAll(user.id),
    async startSignedIn(user) {
      return { cookieValue: (await deps.sessions.create({ userId: user.id })).id };
    },
  };
}
