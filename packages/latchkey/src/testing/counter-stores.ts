/**
 * For this folder's tests: counter stores on every backend this machine offers (SQLite always,
 * PostgreSQL with TEST_DATABASE_URL, Redis with REDIS_URL), each able to open a second, separate
 * connection to the same counters, as a second instance of the project would.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createTestDatabase, testDatabaseKinds, type TestDatabaseKind } from './database.js';
import { openDatabase, type Database } from '../storage/database.js';
import type { CounterStore } from '../core/rate-limit/counter-store.js';
import { createDatabaseCounterStore } from '../storage/kysely/counter-store.js';
import { openRedisCounterStore } from '../cache/redis-counter-store.js';

export type CounterStoreKind = TestDatabaseKind | 'redis';

export function testRedisUrl(): string | undefined {
  const url = process.env.REDIS_URL;
  return url === undefined || url === '' ? undefined : url;
}

/** The backends to run on; Redis only when REDIS_URL is set. */
export function counterStoreKinds(): CounterStoreKind[] {
  return testRedisUrl() === undefined ? testDatabaseKinds() : [...testDatabaseKinds(), 'redis'];
}

export interface TestCounterStore {
  readonly kind: CounterStoreKind;
  readonly store: CounterStore;
  /** Another store over the same counters, through its own connection. */
  openAnother(): Promise<CounterStore>;
  /** The database behind a database store (to look at rows); undefined for Redis. */
  readonly database: Database | undefined;
  /** The Redis key prefix of a Redis store; undefined otherwise. */
  readonly redisKeyPrefix: string | undefined;
  destroy(): Promise<void>;
}

export async function createTestCounterStore(kind: CounterStoreKind): Promise<TestCounterStore> {
  if (kind === 'redis') return createTestRedisStore();
  // A file, not memory, so that a second connection sees the same database.
  const database = await createTestDatabase(kind, 'email', { sqliteFile: true });
  const others: Database[] = [];
  return {
    kind,
    store: createDatabaseCounterStore(database.kysely),
    async openAnother(): Promise<CounterStore> {
      const other = await openDatabase(database.openOptions);
      others.push(other);
      return createDatabaseCounterStore(other.kysely);
    },
    database,
    redisKeyPrefix: undefined,
    async destroy(): Promise<void> {
      await Promise.all(others.map((other) => other.close()));
      await database.destroy();
    },
  };
}

async function createTestRedisStore(): Promise<TestCounterStore> {
  const url = testRedisUrl();
  if (url === undefined) throw new Error('The Redis counter store tests need REDIS_URL, e.g. redis://127.0.0.1:6379/0.');
  // A prefix of its own per test, so that parallel test files never count into each other's keys.
  const keyPrefix = `latchkey-test:${randomBytes(8).toString('hex')}:`;
  const first = await openRedisCounterStore({ url, keyPrefix });
  const stores = [first];
  return {
    kind: 'redis',
    store: first,
    async openAnother(): Promise<CounterStore> {
      const other = await openRedisCounterStore({ url, keyPrefix });
      stores.push(other);
      return other;
    },
    database: undefined,
    redisKeyPrefix: keyPrefix,
    async destroy(): Promise<void> {
      await Promise.all(stores.map((store) => store.close()));
      const client = new Redis(url);
      try {
        const keys = await client.keys(`${keyPrefix}*`);
        if (keys.length > 0) await client.del(...keys);
      } finally {
        await client.quit();
      }
    },
  };
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
