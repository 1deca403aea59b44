/**
 * The state every instance of a project shares: the rate-limit counters and the one-time claims.
 * With REDIS_URL both live in Redis, over ONE connection, so that an outage is noticed, logged and
 * recovered from once (redis-connection.ts); without it, in the project's database.
 */
import type { Database } from '../storage/database.js';
import type { ClosableCounterStore } from '../core/rate-limit/counter-store.js';
import type { ClosableOneTimeClaimStore } from '../core/one-time-claims/one-time-claim-store.js';
import { createDatabaseCounterStore } from '../storage/kysely/counter-store.js';
import { createDatabaseOneTimeClaimStore } from '../storage/kysely/one-time-claim-store.js';
import { connectRedis, type OutageLog } from './redis-connection.js';
import { redisCounterStore } from './redis-counter-store.js';
import { redisOneTimeClaimStore } from './redis-one-time-claim-store.js';

export interface SharedStoresOptions {
  database: Pick<Database, 'kysely' | 'dialect'>;
  /** REDIS_URL; null, undefined or '' keeps both in the database. */
  redisUrl?: string | null;
  /** Redis only: the project's namespace, put before every key ('rate-limit:' and 'claim:' follow it). */
  redisNamespace: string;
  /** Redis only: where its outage and recovery are reported. */
  log?: OutageLog;
}

export interface SharedStores {
  counters: ClosableCounterStore;
  oneTimeClaims: ClosableOneTimeClaimStore;
  /** Redis only (undefined without it): resolves when the server answers PING, for the health check. */
  pingRedis: (() => Promise<void>) | undefined;
}

export async function createSharedStores(options: SharedStoresOptions): Promise<SharedStores> {
  const { redisUrl } = options;
  if (redisUrl === undefined || redisUrl === null || redisUrl === '') {
    // The database's connections belong to the Database, which closes them itself.
    const nothingToClose = (): Promise<void> => Promise.resolve();
    return {
      counters: { ...createDatabaseCounterStore(options.database.kysely, options.database.dialect), close: nothingToClose },
      oneTimeClaims: { ...createDatabaseOneTimeClaimStore(options.database.kysely), close: nothingToClose },
      pingRedis: undefined,
    };
  }
  const connection = await connectRedis({ url: redisUrl, ...(options.log === undefined ? {} : { log: options.log }) });
  return {
    counters: redisCounterStore(connection, `${options.redisNamespace}rate-limit:`),
    // Each store closes the connection once; it ends with the second.
    oneTimeClaims: redisOneTimeClaimStore(connection.retain(), `${options.redisNamespace}claim:`),
    // Through the same connection, so an outage it meets is logged once like any other.
    pingRedis: () => connection.run((client) => client.ping()).then(() => undefined),
  };
}
