/**
 * Where rate-limit counters live: the database (shared by every instance that shares it) or
 * Redis. Windows are FIXED: the limiter names a bucket after its window's start, so a bucket is
 * only ever counted within one window, and the store lets it expire at that window's end.
 */
export interface CounterStore {
  /**
   * Adds one to each bucket (creating it at 1, to expire at its window's end) and returns the new
   * counts in the order given, all in one atomic step: N concurrent calls on the same buckets get
   * exactly the counts 1..N, and the same number from every bucket, so parallel attempts can
   * never share a count and an attempt's place in line is the same in all of its windows.
   */
  increment(buckets: readonly CountedBucket[], now: Date): Promise<number[]>;
  /** Takes one back from a live bucket; never below 0 and never creates one. */
  decrement(bucket: string, now: Date): Promise<void>;
  /** Removes buckets whose window has ended; returns how many (Redis expires keys itself: 0). */
  deleteExpired(now: Date): Promise<number>;
}

/** A counter, named by the limiter after its action, scope, window and subject. */
export interface CountedBucket {
  readonly name: string;
  readonly windowEnd: Date;
}

/**
 * The buckets in one order shared by every caller (by name), so that two atomic increments over
 * overlapping buckets take their locks in the same order and neither waits on the other in a cycle.
 */
export function inLockOrder(buckets: readonly CountedBucket[]): CountedBucket[] {
  return [...buckets].sort((first, second) => (first.name < second.name ? -1 : first.name > second.name ? 1 : 0));
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
 * The window of `windowSeconds` that contains `now`. Windows are aligned on the Unix epoch (moved
 * on by `offsetMs`), so every instance computes the same window (and thus the same bucket) for
 * the same instant.
 */
export function fixedWindow(now: Date, windowSeconds: number, offsetMs = 0): FixedWindow {
  const length = windowSeconds * 1000;
  const start = Math.floor((now.getTime() - offsetMs) / length) * length + offsetMs;
  return { start: new Date(start), end: new Date(start + length) };
}
