/**
 * Where rate-limit counters live: the database (shared by every instance that shares it) or
 * Redis. Windows are FIXED: the limiter names a bucket after its window's start, so a bucket is
 * only ever counted within one window, and the store lets it expire at that window's end.
 */
export interface CounterStore {
  /**
   * Adds one to the bucket (creating it at 1) and returns the new count, atomically: N concurrent
   * calls on one bucket return exactly 1..N, so parallel attempts can never share a count.
   */
  increment(bucket: string, windowSeconds: number, now: Date): Promise<number>;
  /** Takes one back from a live bucket; never below 0 and never creates one. */
  decrement(bucket: string, now: Date): Promise<void>;
  /** Removes buckets whose window has ended; returns how many (Redis expires keys itself: 0). */
  deleteExpired(now: Date): Promise<number>;
}

/** A store holding a connection of its own (Redis), which must be closed at shutdown. */
export interface ClosableCounterStore extends CounterStore {
  /** Closes the connection, if the store opened one; calling it again does nothing. */
  close(): Promise<void>;
}

export interface FixedWindow {
  readonly start: Date;
  readonly end: Date;
}

/**
 * The window of `windowSeconds` that contains `now`. Windows are aligned on the Unix epoch, so
 * every instance computes the same window (and thus the same bucket) for the same instant.
 */
export function fixedWindow(now: Date, windowSeconds: number): FixedWindow {
  const length = windowSeconds * 1000;
  const start = Math.floor(now.getTime() / length) * length;
  return { start: new Date(start), end: new Date(start + length) };
}
