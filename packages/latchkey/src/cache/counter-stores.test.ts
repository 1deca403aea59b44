/**
 * One set of expectations for every counter store: the database ones (SQLite, PostgreSQL) and
 * Redis, each when this machine offers it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LatchkeyError } from '../core/errors.js';
import { fixedWindow, type CounterStore } from '../core/rate-limit/counter-store.js';
import { createCounterStore } from './create-counter-store.js';
import { openRedisCounterStore } from './redis-counter-store.js';
import { counterStoreKinds, createTestCounterStore, type TestCounterStore } from '../testing/counter-stores.js';
import { closedLocalPort, testRedisUrl, withRedisClient } from '../testing/shared-stores.js';
import { sql, type Kysely } from 'kysely';
import { openDatabase } from '../storage/database.js';
import type { DatabaseSchema } from '../storage/kysely/schema.js';

/** Resolves once a session of this PostgreSQL database waits for a lock another holds. */
async function waitUntilSomeoneWaitsForALock(db: Kysely<DatabaseSchema>): Promise<void> {
  for (;;) {
    const waiting = await sql<{ count: string }>`select count(*) as count from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%latchkey_rate_limit_counters%'`.execute(db);
    if (Number(waiting.rows[0]?.count) > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const NOW = new Date('2030-01-01T00:00:10.000Z');
const MINUTE = 60;
/** The end of NOW's one-minute window (00:01:00), and of its one-hour window (01:00:00). */
const MINUTE_END = fixedWindow(NOW, MINUTE).end;
const HOUR_END = fixedWindow(NOW, 3600).end;

/** No limit in reach: every attempt is counted. */
const UNLIMITED = Number.MAX_SAFE_INTEGER;

/** Counts one attempt in one bucket without a limit (by default in NOW's minute) and returns its new count. */
async function countOne(store: CounterStore, name: string, windowEnd = MINUTE_END, now = NOW): Promise<number> {
  const { counted, counts } = await store.countWithinLimits([{ name, windowEnd, limit: UNLIMITED }], now);
  const [count] = counts;
  if (!counted || count === undefined) throw new Error('the store did not count an attempt without a limit');
  return count;
}

describe('fixedWindow', () => {
  it('aligns windows on the epoch, so every instance computes the same one', () => {
    expect(fixedWindow(NOW, MINUTE)).toEqual({ start: new Date('2030-01-01T00:00:00.000Z'), end: new Date('2030-01-01T00:01:00.000Z') });
    expect(fixedWindow(new Date('2030-01-01T00:04:59.999Z'), 300).end).toEqual(new Date('2030-01-01T00:05:00.000Z'));
    expect(fixedWindow(new Date('2030-01-01T00:05:00.000Z'), 300).start).toEqual(new Date('2030-01-01T00:05:00.000Z'));
  });

  it('moves the windows on by an offset', () => {
    expect(fixedWindow(NOW, MINUTE, 30_000)).toEqual({ start: new Date('2029-12-31T23:59:30.000Z'), end: new Date('2030-01-01T00:00:30.000Z') });
    expect(fixedWindow(new Date('2030-01-01T00:00:30.000Z'), MINUTE, 30_000).start).toEqual(new Date('2030-01-01T00:00:30.000Z'));
  });
});

for (const kind of counterStoreKinds()) {
  describe(`counter store on ${kind}`, () => {
    let target: TestCounterStore;
    let store: CounterStore;

    beforeEach(async () => {
      target = await createTestCounterStore(kind);
      store = target.store;
    });

    afterEach(async () => {
      await target.destroy();
    });

    it('counts each bucket on its own', async () => {
      expect(await countOne(store, 'a')).toBe(1);
      expect(await countOne(store, 'a')).toBe(2);
      expect(await countOne(store, 'b')).toBe(1);
      expect(await countOne(store, 'a')).toBe(3);
    });

    it('gives 50 parallel increments of one bucket exactly the counts 1 to 50', async () => {
      const counts = await Promise.all(Array.from({ length: 50 }, () => countOne(store, 'parallel')));
      expect(counts.sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, index) => index + 1));
    });

    it('counts several buckets in one step, and decides 30 parallel calls one after another', async () => {
      const unlimited = (name: string, windowEnd: Date) => ({ name, windowEnd, limit: UNLIMITED });
      expect(await store.countWithinLimits([unlimited('x', MINUTE_END), unlimited('y', HOUR_END)], NOW)).toEqual({ counted: true, counts: [1, 1] });
      expect(await store.countWithinLimits([unlimited('y', HOUR_END), unlimited('z', MINUTE_END)], NOW)).toEqual({ counted: true, counts: [2, 1] });
      expect(await store.countWithinLimits([], NOW)).toEqual({ counted: true, counts: [] });
      // The two buckets are named in both orders: the store takes its locks in one order anyway.
      const other = await target.openAnother();
      const first = unlimited('first', MINUTE_END);
      const second = unlimited('second', HOUR_END);
      const calls = Array.from({ length: 30 }, async (_, index) => {
        const chosen = index % 2 === 0 ? store : other;
        if (index % 3 !== 0) return (await chosen.countWithinLimits([first, second], NOW)).counts;
        const [inSecond, inFirst] = (await chosen.countWithinLimits([second, first], NOW)).counts;
        return [inFirst, inSecond];
      });
      const counts = await Promise.all(calls);
      for (const [inFirst, inSecond] of counts) expect(inFirst).toBe(inSecond);
      expect(counts.map(([inFirst]) => inFirst ?? 0).sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, index) => index + 1));
    });

    it('counts an attempt nowhere when one of its buckets is full, and tells the counts as they stand', async () => {
      const minute = { name: 'minute-limit', windowEnd: MINUTE_END, limit: 2 };
      const day = { name: 'day-limit', windowEnd: HOUR_END, limit: 100 };
      expect(await store.countWithinLimits([minute, day], NOW)).toEqual({ counted: true, counts: [1, 1] });
      expect(await store.countWithinLimits([minute, day], NOW)).toEqual({ counted: true, counts: [2, 2] });
      for (let i = 0; i < 5; i += 1) expect(await store.countWithinLimits([minute, day], NOW)).toEqual({ counted: false, counts: [2, 2] });
      // The refused attempts left the day's bucket as it was: another rule's room is untouched.
      expect(await store.countWithinLimits([day], NOW)).toEqual({ counted: true, counts: [3] });
      // A limit of 0 refuses even a bucket never counted, and creates nothing.
      expect(await store.countWithinLimits([{ name: 'closed', windowEnd: MINUTE_END, limit: 0 }], NOW)).toEqual({ counted: false, counts: [0] });
      expect(await countOne(store, 'closed')).toBe(1);
    });

    it('counts exactly the room of 40 parallel attempts over two connections, and no refused one', async () => {
      const other = await target.openAnother();
      const tight = { name: 'tight', windowEnd: MINUTE_END, limit: 5 };
      const wide = { name: 'wide', windowEnd: HOUR_END, limit: 1000 };
      const outcomes = await Promise.all(Array.from({ length: 40 }, (_, index) => (index % 2 === 0 ? store : other).countWithinLimits([tight, wide], NOW)));
      expect(outcomes.filter((outcome) => outcome.counted)).toHaveLength(5);
      expect(await countOne(store, 'wide', HOUR_END)).toBe(6);
    });

    it('forgets the buckets it is told to remove, and only those', async () => {
      await countOne(store, 'keep');
      await countOne(store, 'forget');
      await countOne(store, 'forget');
      await store.remove(['forget', 'never-counted']);
      await store.remove([]);
      expect(await countOne(store, 'forget')).toBe(1);
      expect(await countOne(store, 'keep')).toBe(2);
    });

    it('agrees across two connections (two instances of the project)', async () => {
      const other = await target.openAnother();
      const counts = await Promise.all(Array.from({ length: 20 }, (_, index) => countOne(index % 2 === 0 ? store : other, 'shared')));
      expect(counts.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
    });

    it('takes one back on decrement, never below zero, and never creates a bucket', async () => {
      await countOne(store, 'd');
      await countOne(store, 'd');
      await store.decrement('d', NOW);
      expect(await countOne(store, 'd')).toBe(2);
      for (let i = 0; i < 4; i += 1) await store.decrement('d', NOW);
      expect(await countOne(store, 'd')).toBe(1);

      await store.decrement('never-counted', NOW);
      expect(await countOne(store, 'never-counted')).toBe(1);
    });

    it('never goes below zero under parallel decrements', async () => {
      await Promise.all(Array.from({ length: 3 }, () => countOne(store, 'floor')));
      await Promise.all(Array.from({ length: 10 }, () => store.decrement('floor', NOW)));
      expect(await countOne(store, 'floor')).toBe(1);
    });

    if (kind === 'redis') {
      it('lets a key expire after the time left in its window, read on its own clock', async () => {
        await countOne(store, 'ttl');
        const ttl = await withRedisClient((client) => client.pttl(`${target.redisKeyPrefix}ttl`));
        // 50 s remain in the window at NOW (00:00:10); a little has passed on Redis's clock since.
        expect(ttl).toBeGreaterThan(45_000);
        expect(ttl).toBeLessThanOrEqual(50_000);
        expect(await store.deleteExpired(new Date(NOW.getTime() + 3600_000))).toBe(0);
      });
    } else {
      it('stores the bucket with its window end, and deleteExpired removes only ended windows', async () => {
        const database = target.database!;
        await countOne(store, 'minute');
        await countOne(store, 'hour', HOUR_END);
        const rows = await database.kysely.selectFrom('latchkey_rate_limit_counters').selectAll().orderBy('bucket').execute();
        expect(rows.map((row) => [row.bucket, row.count, new Date(row.expires_at).toISOString()])).toEqual([
          ['hour', 1, '2030-01-01T01:00:00.000Z'],
          ['minute', 1, '2030-01-01T00:01:00.000Z'],
        ]);

        expect(await store.deleteExpired(new Date('2030-01-01T00:00:59.999Z'))).toBe(0);
        expect(await store.deleteExpired(new Date('2030-01-01T00:01:00.000Z'))).toBe(1);
        const left = await database.kysely.selectFrom('latchkey_rate_limit_counters').select('bucket').execute();
        expect(left.map((row) => row.bucket)).toEqual(['hour']);
      });

      it('leaves an ended window alone on decrement', async () => {
        await countOne(store, 'ended');
        await store.decrement('ended', new Date('2030-01-01T00:01:00.000Z'));
        const row = await target.database!.kysely.selectFrom('latchkey_rate_limit_counters').select('count').where('bucket', '=', 'ended').executeTakeFirstOrThrow();
        expect(row.count).toBe(1);
      });

      if (kind === 'postgres') {
        it('removes buckets one at a time in name order, so an attempt holding one of them never deadlocks with a removal', async () => {
          const database = target.database!;
          // rl-b's row is written first, so a scan of the table finds it before rl-a's.
          await countOne(store, 'rl-b');
          await countOne(store, 'rl-a');
          const holder = await openDatabase(database.openOptions);
          try {
            // An attempt in its transaction (the store counts in name order): it holds rl-a, then wants rl-b.
            const attempt = await holder.kysely.startTransaction().execute();
            await sql`update latchkey_rate_limit_counters set count = count + 1 where bucket = 'rl-a'`.execute(attempt);
            // A completed login forgets both buckets meanwhile, and waits for rl-a.
            const removal = store.remove(['rl-b', 'rl-a']);
            await waitUntilSomeoneWaitsForALock(database.kysely);
            await sql`update latchkey_rate_limit_counters set count = count + 1 where bucket = 'rl-b'`.execute(attempt);
            await attempt.commit().execute();
            await expect(removal).resolves.toBeUndefined();
            expect([await countOne(store, 'rl-a'), await countOne(store, 'rl-b')]).toEqual([1, 1]);
          } finally {
            await holder.close();
          }
        });
      }

      it('is what createCounterStore picks without a Redis URL', async () => {
        const chosen = await createCounterStore({ database: target.database!, redisUrl: null });
        expect(await countOne(chosen, 'chosen')).toBe(1);
        expect(await countOne(store, 'chosen')).toBe(2);
        await chosen.close();
      });
    }
  });
}

describe('Redis counter store start-up', () => {
  it('refuses an unreachable REDIS_URL in one line, without its password', async () => {
    const port = await closedLocalPort();

    const error = await openRedisCounterStore({ url: `redis://:s3cret@127.0.0.1:${port}/0`, connectTimeoutMs: 1000 }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(LatchkeyError);
    expect((error as LatchkeyError).code).toBe('database_unavailable');
    expect((error as LatchkeyError).message).toContain('REDIS_URL');
    expect((error as LatchkeyError).message).not.toContain('s3cret');
  });

  if (testRedisUrl() !== undefined) {
    it('is what createCounterStore picks with a Redis URL', async () => {
      const prefix = `latchkey-test:${Math.random().toString(36).slice(2)}:`;
      const database = { kysely: undefined as never, dialect: 'sqlite' as const };
      const chosen = await createCounterStore({ database, redisUrl: testRedisUrl()!, redisKeyPrefix: prefix });
      try {
        const now = new Date();
        expect(await countOne(chosen, 'chosen', fixedWindow(now, MINUTE).end, now)).toBe(1);
        expect(await withRedisClient((client) => client.get(`${prefix}chosen`))).toBe('1');
      } finally {
        await chosen.close();
        await withRedisClient((client) => client.del(`${prefix}chosen`));
      }
    });
  }
});
