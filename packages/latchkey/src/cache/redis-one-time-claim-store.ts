/**
 * One-time claims in Redis (REDIS_URL), shared by every instance that uses the same server.
 */
import { closeRedis, connectRedis } from './redis-connection.js';
import type { ClosableOneTimeClaimStore } from '../core/one-time-claims/one-time-claim-store.js';

export const DEFAULT_REDIS_CLAIM_KEY_PREFIX = 'latchkey:claim:';

export interface RedisOneTimeClaimStoreOptions {
  url: string;
  /** Put before every key, so that several projects (or test runs) can share one server. */
  keyPrefix?: string;
  /** How long to wait for the server at start-up; default 5000 ms. */
  connectTimeoutMs?: number;
}

/** Opens the connection and checks that the server answers, so a bad REDIS_URL stops start-up. */
export async function openRedisOneTimeClaimStore(options: RedisOneTimeClaimStoreOptions): Promise<ClosableOneTimeClaimStore> {
  const prefix = options.keyPrefix ?? DEFAULT_REDIS_CLAIM_KEY_PREFIX;
  const client = await connectRedis(options.url, options.connectTimeoutMs);

  let closed = false;
  return {
    async claim(key: string, ttlSeconds: number): Promise<boolean> {
      // SET NX is one command: of any number of parallel claims exactly one sets the key. The
      // expiry is relative (PX, the claim's lifetime), not absolute (PXAT, `now` plus the lifetime):
      // an absolute instant computed from our clock would be read against Redis's clock, and with
      // ours running behind by more than the lifetime every claim would expire on arrival, letting
      // every replay through without a sound. So `now` is not needed here.
      const ttlMs = Math.max(1, Math.ceil(ttlSeconds * 1000));
      const reply = await client.set(prefix + key, '1', 'PX', ttlMs, 'NX');
      return reply === 'OK';
    },

    deleteExpired(): Promise<number> {
      return Promise.resolve(0);
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await closeRedis(client);
    },
  };
}
