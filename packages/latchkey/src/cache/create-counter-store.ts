/**
 * Chooses where the counters live: Redis when REDIS_URL is set, else the project's database. Both
 * are shared by every instance of the project, so the limits hold across instances (an in-memory
 * counter per process would multiply every limit by the number of instances).
 */
import type { Database } from '../storage/database.js';
import type { ClosableCounterStore } from '../core/rate-limit/counter-store.js';
import { createDatabaseCounterStore } from '../storage/kysely/counter-store.js';
import { openRedisCounterStore } from './redis-counter-store.js';

export interface CounterStoreOptions {
  database: Pick<Database, 'kysely' | 'dialect'>;
  /** REDIS_URL; null or undefined keeps the counters in the database. */
  redisUrl?: string | null;
  /** Redis only: put before every key (default 'latchkey:rate-limit:'). */
  redisKeyPrefix?: string;
}

export async function createCounterStore(options: CounterStoreOptions): Promise<ClosableCounterStore> {
  if (options.redisUrl !== undefined && options.redisUrl !== null && options.redisUrl !== '') {
    return openRedisCounterStore({ url: options.redisUrl, ...(options.redisKeyPrefix === undefined ? {} : { keyPrefix: options.redisKeyPrefix }) });
  }
  // The database's connections belong to the Database, which closes them itself.
  return { ...createDatabaseCounterStore(options.database.kysely, options.database.dialect), close: () => Promise.resolve() };
}
