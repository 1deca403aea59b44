/**
 * Rate-limit counters in Redis (REDIS_URL), shared by every instance that uses the same server.
 * While Redis is away every call is refused with LatchkeyError('server_busy') (redis-connection.ts):
 * an attempt that cannot be counted is not allowed.
 */
import { connectRedis, type OutageLog, type RedisConnection } from './redis-connection.js';
import type { ClosableCounterStore, CountedBucket } from '../core/rate-limit/counter-store.js';

export const DEFAULT_REDIS_KEY_PREFIX = 'latchkey:rate-limit:';

export interface RedisCounterStoreOptions {
  url: string;
  /** Put before every key, so that several projects (or test runs) can share one server. */
  keyPrefix?: string;
  /** How long to wait for the server at start-up; default 5000 ms. */
  connectTimeoutMs?: number;
  /** How long a command may wait for its answer; default 2000 ms. */
  commandTimeoutMs?: number;
  log?: OutageLog;
}

/**
 * GET then DECR inside one script, which Redis runs without interleaving any other command, so a
 * decrement can neither go below zero nor recreate a key that has just expired (DECR on a missing
 * key would create it at -1, with no expiry).
 */
const DECREMENT_TO_ZERO = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 then return redis.call('DECR', KEYS[1]) end
return 0`;

/** Opens the connection and checks that the server answers, so a bad REDIS_URL stops start-up. */
export async function openRedisCounterStore(options: RedisCounterStoreOptions): Promise<ClosableCounterStore> {
  return redisCounterStore(await connectRedis(options), options.keyPrefix);
}

/** The counters over a connection already open; closing the store lets go of the connection. */
export function redisCounterStore(connection: RedisConnection, keyPrefix: string = DEFAULT_REDIS_KEY_PREFIX): ClosableCounterStore {
  let closed = false;
  return {
    async increment(buckets: readonly CountedBucket[], now: Date): Promise<number[]> {
      if (buckets.length === 0) return [];
      // MULTI runs the whole batch without another client's command in between, so two attempts
      // meet in the same order in every bucket. The expiry is relative (PEXPIRE, the time left in
      // the window as this instance sees it), not absolute (PEXPIREAT): an absolute end computed
      // from our clock would be read against Redis's clock, and with ours running behind by more
      // than a window every key would expire on arrival, switching the limit off without a sound.
      return connection.run(async (client) => {
        const transaction = client.multi();
        for (const bucket of buckets) {
          const key = keyPrefix + bucket.name;
          transaction.incr(key).pexpire(key, Math.max(1, bucket.windowEnd.getTime() - now.getTime()));
        }
        const results = await transaction.exec();
        if (results === null) throw new Error('Redis discarded the rate-limit transaction.');
        return buckets.map((_, index) => {
          const [error, count] = results[index * 2] ?? [new Error('Redis left out a rate-limit count.'), 0];
          if (error !== null) throw error;
          return Number(count);
        });
      });
    },

    async decrement(bucket: string): Promise<void> {
      await connection.run((client) => client.eval(DECREMENT_TO_ZERO, 1, keyPrefix + bucket));
    },

    deleteExpired(): Promise<number> {
      return Promise.resolve(0);
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await connection.close();
    },
  };
}
