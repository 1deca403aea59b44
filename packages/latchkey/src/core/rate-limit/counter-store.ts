/**
 * Where rate-limit counters live: the database (shared by every instance that shares it) or
 * Redis. Windows are FIXED: the limiter names a bucket after its window's start, so a bucket is
 * only ever counted within one window, and the store lets it expire at that window's end.
 */
export interface CounterStore {
  /**
   * Counts one attempt in every bucket (a bucket is created at 1, to expire at its window's end),
   * unless one of them has already reached its limit: then nothing is counted anywhere. Either way
   * in one atomic step, so N concurrent calls on the same buckets are decided one after another
   * and exactly as many are counted as the fullest bucket has room for. Returns whether it was
   * counted, and each bucket's count in the order given: after counting, or as it stands when
   * nothing was counted.
   */
  countWithinLimits(buckets: readonly LimitedBucket[], now: Date): Promise<CountOutcome>;
  /** Takes one back from a live bucket; never below 0 and never creates one. */
  decrement(bucket: string, now: Date): Promise<void>;
  /** Forgets the buckets named (their counts start again from 0); missing ones are left missing. */
  remove(buckets: readonly string[]): Promise<void>;
  /** Removes buckets whose window has ended; returns how many (Redis expires keys itself: 0). */
  deleteExpired(now: Date): Promise<number>;
}

/** A counter, named by the limiter after its action, scope, window and subject. */
export interface CountedBucket {
  readonly name: string;
  readonly windowEnd: Date;
}

/** A counter with the number of attempts its window allows. */
export interface LimitedBucket extends CountedBucket {
  readonly limit: number;
}

export interface CountOutcome {
  counted: boolean;
  counts: number[];
}

/** Whether an attempt fits every bucket, given the counts before it: each must be below its limit. */
export function fitsWithinLimits(buckets: readonly LimitedBucket[], countsBefore: readonly number[]): boolean {
  return buckets.every((bucket, index) => (countsBefore[index] ?? 0) < bucket.limit);
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
