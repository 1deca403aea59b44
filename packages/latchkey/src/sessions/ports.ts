import type { SessionChanges, StoredSession } from './model.js';

export interface SessionRepository {
  /** Throws 'not_found' when `userId` names a user who no longer exists. */
  create(session: StoredSession): Promise<void>;
  find(idHash: string): Promise<StoredSession | undefined>;
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
}
