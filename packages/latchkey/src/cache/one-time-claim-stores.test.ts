/**
 * One set of expectations for every one-time claim store: the database ones (SQLite, PostgreSQL)
 * and Redis, each when this machine offers it. When REDIS_URL is not set, vitest.global-setup.ts
 * says in one line that Redis is left out (and fails the run under CI).
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closedLocalPort, createTestSharedStore, sharedStoreKinds, testRedisUrl, withRedisClient, type SharedStoreKind, type TestSharedStore } from '../testing/shared-stores.js';
import { LatchkeyError } from '../core/errors.js';
import { createOneTimeClaimStore } from './create-one-time-claim-store.js';
import { createDatabaseOneTimeClaimStore } from '../storage/kysely/one-time-claim-store.js';
import type { OneTimeClaimStore } from '../core/one-time-claims/one-time-claim-store.js';
import { openRedisOneTimeClaimStore } from './redis-one-time-claim-store.js';

const NOW = new Date('2030-01-01T00:00:10.000Z');
const TTL = 90;

const kinds = sharedStoreKinds();

function createTestClaimStore(kind: SharedStoreKind): Promise<TestSharedStore<OneTimeClaimStore>> {
  return createTestSharedStore<OneTimeClaimStore>(kind, { database: (database) => createDatabaseOneTimeClaimStore(database.kysely), redis: openRedisOneTimeClaimStore });
}

function later(seconds: number): Date {
  return new Date(NOW.getTime() + seconds * 1000);
}

for (const kind of kinds) {
  describe(`one-time claim store on ${kind}`, () => {
    let target: TestSharedStore<OneTimeClaimStore>;
    let store: OneTimeClaimStore;

    beforeEach(async () => {
      target = await createTestClaimStore(kind);
      store = target.store;
    });

    afterEach(async () => {
      await target.destroy();
    });

    it('grants the first claim of a key and refuses the next ones', async () => {
      expect(await store.claim('user:1:code:123456', TTL, NOW)).toBe(true);
      expect(await store.claim('user:1:code:123456', TTL, NOW)).toBe(false);
      expect(await store.claim('user:1:code:123456', TTL, later(1))).toBe(false);
    });

    it('keeps different keys apart', async () => {
      expect(await store.claim('a', TTL, NOW)).toBe(true);
      expect(await store.claim('b', TTL, NOW)).toBe(true);
      expect(await store.claim('a', TTL, NOW)).toBe(false);
      expect(await store.claim('b', TTL, NOW)).toBe(false);
      expect(await store.claim('c', TTL, NOW)).toBe(true);
    });

    it('grants exactly one of ten parallel claims of one key', async () => {
      const outcomes = await Promise.all(Array.from({ length: 10 }, () => store.claim('parallel', TTL, NOW)));
      expect(outcomes.filter((granted) => granted)).toHaveLength(1);
    });

    it('grants exactly one claim across two connections (two instances of the project)', async () => {
      const other = await target.openAnother();
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? store : other).claim('shared', TTL, NOW)));
      expect(outcomes.filter((granted) => granted)).toHaveLength(1);
    });

    if (kind === 'redis') {
      it('lets a claim expire after its lifetime, read on Redis’s own clock', async () => {
        const prefix = target.redisKeyPrefix!;
        // A `now` far in the past changes nothing: the expiry is relative, not an instant of ours.
        expect(await store.claim('long', TTL, new Date('2000-01-01T00:00:00.000Z'))).toBe(true);
        const ttl = await withRedisClient((client) => client.pttl(`${prefix}long`));
        expect(ttl).toBeGreaterThan((TTL - 5) * 1000);
        expect(ttl).toBeLessThanOrEqual(TTL * 1000);

        expect(await store.claim('short', 0.05, new Date())).toBe(true);
        // -2: already gone; otherwise at most the 50 ms it was given.
        const shortTtl = await withRedisClient((client) => client.pttl(`${prefix}short`));
        expect(shortTtl === -2 || (shortTtl > 0 && shortTtl <= 50)).toBe(true);
        // Once Redis has dropped it, the key can be claimed again; wait no longer than that takes.
        const deadline = Date.now() + 5000;
        let again = false;
        while (!again && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          again = await store.claim('short', TTL, new Date());
        }
        expect(again).toBe(true);
        expect(await store.claim('short', TTL, new Date())).toBe(false);
        expect(await store.deleteExpired(later(3600))).toBe(0);
      });
    } else {
      it('stores the claim with its expiry, and grants it again once expired', async () => {
        const database = target.database!;
        expect(await store.claim('step', 30, NOW)).toBe(true);
        const rows = await database.kysely.selectFrom('latchkey_one_time_claims').selectAll().execute();
        expect(rows.map((row) => [row.key, new Date(row.expires_at).toISOString()])).toEqual([['step', '2030-01-01T00:00:40.000Z']]);

        expect(await store.claim('step', 30, new Date('2030-01-01T00:00:39.999Z'))).toBe(false);
        // Expired at its expiry instant, as deleteExpired counts it: claimable again, for a new lifetime.
        expect(await store.claim('step', 30, later(30))).toBe(true);
        expect(await store.claim('step', 30, later(59))).toBe(false);
        expect(await store.claim('step', 30, later(60))).toBe(true);
        const renewed = await database.kysely.selectFrom('latchkey_one_time_claims').select('expires_at').executeTakeFirstOrThrow();
        expect(new Date(renewed.expires_at).toISOString()).toBe('2030-01-01T00:01:40.000Z');
      });

      it('grants exactly one of ten parallel claims of an expired key', async () => {
        await store.claim('stale', 30, NOW);
        const outcomes = await Promise.all(Array.from({ length: 10 }, () => store.claim('stale', 30, later(45))));
        expect(outcomes.filter((granted) => granted)).toHaveLength(1);
      });

      it('removes only expired claims on deleteExpired, and says how many', async () => {
        const database = target.database!;
        await store.claim('ten', 10, NOW);
        await store.claim('twenty', 20, NOW);
        await store.claim('sixty', 60, NOW);
        expect(await store.deleteExpired(later(9.999))).toBe(0);
        expect(await store.deleteExpired(later(20))).toBe(2);
        const left = await database.kysely.selectFrom('latchkey_one_time_claims').select('key').execute();
        expect(left.map((row) => row.key)).toEqual(['sixty']);
        expect(await store.deleteExpired(later(20))).toBe(0);
        // A removed claim is just a new key.
        expect(await store.claim('ten', 10, later(20))).toBe(true);
      });

      it('is what createOneTimeClaimStore picks without a Redis URL', async () => {
        const chosen = await createOneTimeClaimStore({ database: target.database!, redisUrl: null });
        expect(await chosen.claim('chosen', TTL, NOW)).toBe(true);
        expect(await store.claim('chosen', TTL, NOW)).toBe(false);
        await chosen.close();
      });
    }
  });
}

describe('Redis one-time claim store start-up', () => {
  it('refuses an unreachable REDIS_URL in one line, without its password', async () => {
    const port = await closedLocalPort();

    const error = await openRedisOneTimeClaimStore({ url: `redis://:s3cret@127.0.0.1:${port}/0`, connectTimeoutMs: 1000 }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(LatchkeyError);
    expect((error as LatchkeyError).code).toBe('database_unavailable');
    expect((error as LatchkeyError).message).toContain('REDIS_URL');
    expect((error as LatchkeyError).message).not.toContain('s3cret');
  });

  if (testRedisUrl() !== undefined) {
    it('is what createOneTimeClaimStore picks with a Redis URL', async () => {
      const prefix = `latchkey-test:${randomBytes(8).toString('hex')}:`;
      const database = { kysely: undefined as never };
      const chosen = await createOneTimeClaimStore({ database, redisUrl: testRedisUrl()!, redisKeyPrefix: prefix });
      try {
        expect(await chosen.claim('chosen', TTL, new Date())).toBe(true);
        expect(await chosen.claim('chosen', TTL, new Date())).toBe(false);
        expect(await withRedisClient((client) => client.get(`${prefix}chosen`))).toBe('1');
      } finally {
        await chosen.close();
        await withRedisClient((client) => client.del(`${prefix}chosen`));
      }
    });
  }
});
