/**
 * Rate-limit counters in Redis (REDIS_URL), shared by every instance that uses the same server.
 * While Redis is away every call is refused with LatchkeyError('server_busy') (redis-connection.ts):
 * an attempt that cannot be counted is not allowed.
 */
import { connectRedis, type OutageLog, type RedisConnection } from './redis-connection.js';
import type { ClosableCounterStore, CountOutcome, LimitedBucket } from '../core/rate-limit/counter-store.js';

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

/**
 * Reads every bucket, and counts the attempt in all of them only when each is below its limit,
 * inside one script: no other client's command runs between the reads and the increments, so
 * parallel attempts are decided one after another. ARGV holds each bucket's limit and the time
 * left in its window. The answer is 1 or 0 (counted or not), then each bucket's count.
 *
 * The expiry is relative (PEXPIRE, the time left in the window as this instance sees it), not
 * absolute (PEXPIREAT): an absolute end computed from our clock would be read against Redis's
 * clock, and with ours running behind by more than a window every key would expire on arrival,
 * switching the limit off without a sound.
 */
const COUNT_WITHIN_LIMITS = `
local counts = {}
local fits = 1
for index, key in ipairs(KEYS) do
  counts[index] = tonumber(redis.call('GET', key) or '0')
  if counts[index] >= tonumber(ARGV[index * 2 - 1]) then fits = 0 end
end
if fits == 1 then
  for index, key in ipairs(KEYS) do
    counts[index] = redis.call('INCR', key)
    redis.call('PEXPIRE', key, ARGV[index * 2])
  end
end
table.insert(counts, 1, fits)
return counts`;

/** Opens the connection and checks that the server answers, so a bad REDIS_URL stops start-up. */
export async function openRedisCounterStore(options: RedisCounterStoreOptions): Promise<ClosableCounterStore> {
  return redisCounterStore(await connectRedis(options), options.keyPrefix);
}

/** The counters over a connection already open; closing the store lets go of the connection. */
export function redisCounterStore(connection: RedisConnection, keyPrefix: string = DEFAULT_REDIS_KEY_PREFIX): ClosableCounterStore {
  let closed = false;
  return {
    async countWithinLimits(buckets: readonly LimitedBucket[], now: Date): Promise<CountOutcome> {
      if (buckets.length === 0) return { counted: true, counts: [] };
      const keys = buckets.map((bucket) => keyPrefix + bucket.name);
      const limitsAndLifetimes = buckets.flatMap((bucket) => [bucket.limit, Math.max(1, bucket.windowEnd.getTime() - now.getTime())]);
      const answer = await connection.run((client) => client.eval(COUNT_WITHIN_LIMITS, keys.length, ...keys, ...limitsAndLifetimes));
      if (!Array.isArray(answer) || answer.length !== buckets.length + 1) throw new Error('Redis answered the rate-limit script with something else than the counts.');
      const [fits, ...counts] = answer.map(Number);
      return { counted: fits === 1, counts };
    },

    async decrement(bucket: string): Promise<void> {
      await connection.run((client) => client.eval(DECREMENT_TO_ZERO, 1, keyPrefix + bucket));
    },

    async remove(buckets: readonly string[]): Promise<void> {
      if (buckets.length === 0) return;
      await connection.run((client) => client.del(...buckets.map((bucket) => keyPrefix + bucket)));
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
