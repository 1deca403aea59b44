/**
 * One-time claims: the replay guard for one-time codes. A TOTP code stays valid for its whole time
 * step (and the steps either side), so a code seen over someone's shoulder, or sent twice by a
 * double-clicked form, would be accepted again; claiming "this user, this code, this step" first
 * makes the second use fail. The claims live where the rate-limit counters do (Redis when
 * REDIS_URL is set, else the project's database), so every instance of the project agrees.
 */

/** A set of keys each claimable once while it lives: the replay guard for one-time codes. */
export interface OneTimeClaimStore {
  /**
   * Claims `key` for `ttlSeconds` from `now`. True for the first claim; false for every later one
   * until the claim expires. Atomic: of any number of parallel claims of one key, across every
   * instance sharing the database or the Redis server, exactly one returns true.
   */
  claim(key: string, ttlSeconds: number, now: Date): Promise<boolean>;
  /** Removes expired claims; returns how many (Redis expires keys itself: 0). */
  deleteExpired(now: Date): Promise<number>;
}

/** A store holding a connection of its own (Redis), which must be closed at shutdown. */
export interface ClosableOneTimeClaimStore extends OneTimeClaimStore {
  /** Closes the connection, if the store opened one; calling it again does nothing. */
  close(): Promise<void>;
}
