/**
 * For the tests of the state several instances share (rate-limit counters, one-time claims):
 * a store on every backend this machine offers (SQLite always, PostgreSQL with TEST_DATABASE_URL,
 * Redis with REDIS_URL), each able to open a second, separate connection to the same state, as a
 * second instance of the project would.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { openDatabase, type Database } from '../storage/database.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabase, type TestDatabaseKind } from './database.js';

export type SharedStoreKind = TestDatabaseKind | 'redis';

export function testRedisUrl(): string | undefined {
  const url = process.env.REDIS_URL;
  return url === undefined || url === '' ? undefined : url;
}

/** The backends to run on; Redis only when REDIS_URL is set (vitest.global-setup.ts says so when it is not). */
export function sharedStoreKinds(): SharedStoreKind[] {
  return testRedisUrl() === undefined ? testDatabaseKinds() : [...testDatabaseKinds(), 'redis'];
}

/** How one kind of store is made on each backend. */
export interface StoreBackends<T> {
  database(database: Pick<Database, 'kysely' | 'dialect'>): T;
  redis(options: { url: string; keyPrefix: string }): Promise<T & { close(): Promise<void> }>;
}

export interface TestSharedStore<T> {
  readonly kind: SharedStoreKind;
  readonly store: T;
  /** Another store over the same state, through its own connection. */
  openAnother(): Promise<T>;
  /** The database behind a database store (to look at rows); undefined for Redis. */
  readonly database: TestDatabase | undefined;
  /** The Redis key prefix of a Redis store (its own per test); undefined otherwise. */
  readonly redisKeyPrefix: string | undefined;
  destroy(): Promise<void>;
}

export async function createTestSharedStore<T>(kind: SharedStoreKind, backends: StoreBackends<T>): Promise<TestSharedStore<T>> {
  if (kind === 'redis') return createTestRedisStore(backends);
  // A file, not memory, so that a second connection sees the same database.
  const database = await createTestDatabase(kind, 'email', { sqliteFile: true });
  const others: Database[] = [];
  return {
    kind,
    store: backends.database(database),
    async openAnother(): Promise<T> {
      const other = await openDatabase(database.openOptions);
      others.push(other);
      return backends.database(other);
    },
    database,
    redisKeyPrefix: undefined,
    async destroy(): Promise<void> {
      await Promise.all(others.map((other) => other.close()));
      await database.destroy();
    },
  };
}

async function createTestRedisStore<T>(backends: StoreBackends<T>): Promise<TestSharedStore<T>> {
  const url = testRedisUrl();
  if (url === undefined) throw new Error('The Redis store tests need REDIS_URL, e.g. redis://127.0.0.1:6379/0.');
  // A prefix of its own per test, so that parallel test files never touch each other's keys.
  const keyPrefix = `latchkey-test:${randomBytes(8).toString('hex')}:`;
  const first = await backends.redis({ url, keyPrefix });
  const stores = [first];
  return {
    kind: 'redis',
    store: first,
    async openAnother(): Promise<T> {
      const other = await backends.redis({ url, keyPrefix });
      stores.push(other);
      return other;
    },
    database: undefined,
    redisKeyPrefix: keyPrefix,
    async destroy(): Promise<void> {
      await Promise.all(stores.map((store) => store.close()));
      await withRedisClient(async (client) => {
        const keys = await client.keys(`${keyPrefix}*`);
        if (keys.length > 0) await client.del(...keys);
      });
    },
  };
}

/** A plain client of the test Redis (REDIS_URL), to look at keys directly. */
export async function withRedisClient<T>(work: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(testRedisUrl()!);
  try {
    return await work(client);
  } finally {
    await client.quit();
  }
}

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago): an unreachable server. */
export async function closedLocalPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}
