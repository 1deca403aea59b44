import type { User } from '../account/model.js';
import type { UserLabel } from '../account/ports.js';
import type { SessionChanges, StoredSession } from './model.js';

export interface SessionRepository {
  /** Throws 'not_found' when `userId` names a user who no longer exists. */
  create(session: StoredSession): Promise<void>;
  find(idHash: string): Promise<StoredSession | undefined>;
  /**
   * The session with its user read in the same query, as every request that carries a session
   * needs both: `user` is undefined for a session without one (a visitor's) or whose user is gone.
   */
  findWithUser(idHash: string): Promise<{ session: StoredSession; user: User | undefined } | undefined>;
  update(idHash: string, changes: SessionChanges): Promise<boolean>;
  delete(idHash: string): Promise<boolean>;
  /** Ends every session of the user, except the one named; returns how many ended. */
  deleteForUser(userId: number, options?: { exceptIdHash?: string }): Promise<number>;
  /** Most recently seen first. */
  listForUser(userId: number): Promise<StoredSession[]>;
  /**
   * Removes sessions whose absolute expiry is at or before `now`, and, when `idleSince` is given,
   * those last seen at or before it; returns how many.
   */
  deleteExpired(now: Date, idleSince?: Date): Promise<number>;
  /**
   * A page of signed-in sessions for the admin, most recently seen first (ties by id hash),
   * continuing after `after` (keyset paging: each page costs the same however deep it is, with no
   * count), each with its user's login names, in one query. Sessions without a user (a visitor's,
   * a login stopped at a stage) are never listed, nor is any session's data (it holds the CSRF
   * secret and whatever a flow keeps there).
   */
  search(query: SessionSearch): Promise<ListedSession[]>;
}

export interface SessionSearch {
  /** Only this user's sessions. */
  userId?: number;
  /** Sessions past their absolute expiry (at or before `now`) are left out, */
  now: Date;
  /** and so are those last seen at or before `idleSince` (the idle timeout): both are over already. */
  idleSince: Date;
  /** The last session of the previous page. */
  after?: Pick<StoredSession, 'lastSeenAt' | 'idHash'>;
  limit: number;
}

/** A session as the admin lists it: everything but its data, with whose it is. */
export interface ListedSession extends Omit<StoredSession, 'sealedData' | 'userId'> {
  userId: number;
  user: UserLabel;
}
