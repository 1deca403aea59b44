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
    async increment(bucket, windowSeconds, now): Promise<number> {
      const count = await inner.increment(bucket, windowSeconds, now);
      counts.set(bucket, [...(counts.get(bucket) ?? []), count]);
      return count;
    },
    decrement: (bucket, now) => inner.decrement(bucket, now),
    deleteExpired: (now) => inner.deleteExpired(now),
  };
}
