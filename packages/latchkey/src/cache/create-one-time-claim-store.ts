/**
 * Chooses where the one-time claims live: Redis when REDIS_URL is set, else the project's
 * database, as for the rate-limit counters. Both are shared by every instance of the project (a
 * claim kept in one process's memory would let a code be replayed against another instance).
 */
import type { Database } from '../storage/database.js';
import { createDatabaseOneTimeClaimStore } from '../storage/kysely/one-time-claim-store.js';
import type { ClosableOneTimeClaimStore } from '../core/one-time-claims/one-time-claim-store.js';
import { openRedisOneTimeClaimStore } from './redis-one-time-claim-store.js';

export interface OneTimeClaimStoreOptions {
  database: Pick<Database, 'kysely'>;
  /** REDIS_URL; null or undefined keeps the claims in the database. */
  redisUrl?: string | null;
  /** Redis only: put before every key (default 'latchkey:claim:'). */
  redisKeyPrefix?: string;
}

export async function createOneTimeClaimStore(options: OneTimeClaimStoreOptions): Promise<ClosableOneTimeClaimStore> {
  if (options.redisUrl !== undefined && options.redisUrl !== null && options.redisUrl !== '') {
    return openRedisOneTimeClaimStore({ url: options.redisUrl, ...(options.redisKeyPrefix === undefined ? {} : { keyPrefix: options.redisKeyPrefix }) });
  }
  // The database's connections belong to the Database, which closes them itself.
  return { ...createDatabaseOneTimeClaimStore(options.database.kysely), close: () => Promise.resolve() };
}
