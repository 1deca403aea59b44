/**
 * Rate-limit counter stores on every backend (shared-stores.ts), for the counter and rate-limiter
 * tests, and a store that records what each increment returned.
 */
import type { CounterStore } from '../core/rate-limit/counter-store.js';
import { openRedisCounterStore } from '../cache/redis-counter-store.js';
import { createDatabaseCounterStore } from '../storage/kysely/counter-store.js';
import { createTestSharedStore, sharedStoreKinds, type SharedStoreKind, type TestSharedStore } from './shared-stores.js';

export type TestCounterStore = TestSharedStore<CounterStore>;

export function counterStoreKinds(): SharedStoreKind[] {
  return sharedStoreKinds();
}

export function createTestCounterStore(kind: SharedStoreKind): Promise<TestCounterStore> {
  return createTestSharedStore<CounterStore>(kind, { database: createDatabaseCounterStore, redis: openRedisCounterStore });
}

/** Wraps a store and remembers every count an increment returned, per bucket. */
export function recordingStore(inner: CounterStore): CounterStore & { counts: Map<string, number[]>; buckets(): string[] } {
  const counts = new Map<string, number[]>();
  return {
    counts,
    buckets: () => [...counts.keys()],
    async increment(buckets, now): Promise<number[]> {
      const returned = await inner.increment(buckets, now);
      buckets.forEach((bucket, index) => counts.set(bucket.name, [...(counts.get(bucket.name) ?? []), returned[index] ?? 0]));
      return returned;
    },
    decrement: (bucket, now) => inner.decrement(bucket, now),
    deleteExpired: (now) => inner.deleteExpired(now),
  };
}
