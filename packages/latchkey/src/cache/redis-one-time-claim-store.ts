/**
 * One-time claims in Redis (REDIS_URL), shared by every instance that uses the same server.
 * While Redis is away every claim is refused with LatchkeyError('server_busy')
 * (redis-connection.ts): a code whose use cannot be recorded is not accepted.
 */
import { connectRedis, type OutageLog, type RedisConnection } from './redis-connection.js';
import type { ClosableOneTimeClaimStore } from '../core/one-time-claims/one-time-claim-store.js';

export const DEFAULT_REDIS_CLAIM_KEY_PREFIX = 'latchkey:claim:';

export interface RedisOneTimeClaimStoreOptions {
  url: string;
  /** Put before every key, so that several projects (or test runs) can share one server. */
  keyPrefix?: string;
  /** How long to wait for the server at start-up; default 5000 ms. */
  connectTimeoutMs?: number;
  /** How long a command may wait for its answer; default 2000 ms. */
  commandTimeoutMs?: number;
  log?: OutageLog;
}

/** Opens the connection and checks that the server answers, so a bad REDIS_URL stops start-up. */
export async function openRedisOneTimeClaimStore(options: RedisOneTimeClaimStoreOptions): Promise<ClosableOneTimeClaimStore> {
  return redisOneTimeClaimStore(await connectRedis(options), options.keyPrefix);
}

/** The claims over a connection already open; closing the store lets go of the connection. */
export function redisOneTimeClaimStore(connection: RedisConnection, keyPrefix: string = DEFAULT_REDIS_CLAIM_KEY_PREFIX): ClosableOneTimeClaimStore {
  let closed = false;
  return {
    async claim(key: string, ttlSeconds: number): Promise<boolean> {
      // SET NX is one command: of any number of parallel claims exactly one sets the key. The
      // expiry is relative (PX, the claim's lifetime), not absolute (PXAT, `now` plus the lifetime):
      // an absolute instant computed from our clock would be read against Redis's clock, and with
      // ours running behind by more than the lifetime every claim would expire on arrival, letting
      // every replay through without a sound. So `now` is not needed here.
      const ttlMs = Math.max(1, Math.ceil(ttlSeconds * 1000));
      const reply = await connection.run((client) => client.set(keyPrefix + key, '1', 'PX', ttlMs, 'NX'));
      return reply === 'OK';
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
