/**
 * Rate-limit counter stores on every backend (shared-stores.ts), for the counter and rate-limiter
 * tests, and a store that records what each increment returned.
 */
import type { CounterStore, CountOutcome } from '../core/rate-limit/counter-store.js';
import { openRedisCounterStore } from '../cache/redis-counter-store.js';
import { createDatabaseCounterStore } from '../storage/kysely/counter-store.js';
import { createTestSharedStore, sharedStoreKinds, type SharedStoreKind, type TestSharedStore } from './shared-stores.js';

export type TestCounterStore = TestSharedStore<CounterStore>;

export function counterStoreKinds(): SharedStoreKind[] {
  return sharedStoreKinds();
}

export function createTestCounterStore(kind: SharedStoreKind): Promise<TestCounterStore> {
  return createTestSharedStore<CounterStore>(kind, { database: (database) => createDatabaseCounterStore(database.kysely, database.dialect), redis: openRedisCounterStore });
}

/** Wraps a store and remembers every count it answered for an attempt that was counted, per bucket. */
export function recordingStore(inner: CounterStore): CounterStore & { counts: Map<string, number[]>; buckets(): string[] } {
  const counts = new Map<string, number[]>();
  return {
    counts,
    buckets: () => [...counts.keys()],
    async countWithinLimits(buckets, now): Promise<CountOutcome> {
      const outcome = await inner.countWithinLimits(buckets, now);
      if (outcome.counted) buckets.forEach((bucket, index) => counts.set(bucket.name, [...(counts.get(bucket.name) ?? []), outcome.counts[index] ?? 0]));
      return outcome;
    },
    decrement: (bucket, now) => inner.decrement(bucket, now),
    remove: (buckets) => inner.remove(buckets),
    deleteExpired: (now) => inner.deleteExpired(now),
  };
}
