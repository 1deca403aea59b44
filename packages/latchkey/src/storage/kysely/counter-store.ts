/**
 * Rate-limit counters in the project's database (table latchkey_rate_limit_counters, migration
 * 0002), used when REDIS_URL is not set. Every instance sharing the database shares the counts.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from './schema.js';
import { toInstantColumn } from './schema.js';
import { inLockOrder, type CountedBucket, type CounterStore } from '../../core/rate-limit/counter-store.js';

const TABLE = 'latchkey_rate_limit_counters';

/**
 * Give it the database itself, never an open transaction: a counter must be committed the moment
 * it is counted, or a rolled-back request would undo its attempt and let the next one through.
 */
export function createDatabaseCounterStore(db: Kysely<DatabaseSchema>): CounterStore {
  return {
    async increment(buckets: readonly CountedBucket[]): Promise<number[]> {
      if (buckets.length === 0) return [];
      // One statement, so the database serializes concurrent increments on the rows themselves: no
      // read-then-write gap in which two requests could read the same count, and the rows locked
      // in one order, so that two attempts meet in the same order in every bucket. SQLite (3.35+)
      // and PostgreSQL both accept this upsert with RETURNING. The expiry is set by the insert
      // only; every increment of a bucket falls in the same window, so it could not change anyway.
      const rows = await db
        .insertInto(TABLE)
        .values(inLockOrder(buckets).map((bucket) => ({ bucket: bucket.name, count: 1, expires_at: toInstantColumn(bucket.windowEnd) })))
        .onConflict((conflict) => conflict.column('bucket').doUpdateSet((eb) => ({ count: eb(`${TABLE}.count`, '+', 1) })))
        .returning(['bucket', 'count'])
        .execute();
      const counts = new Map(rows.map((row) => [row.bucket, Number(row.count)]));
      return buckets.map((bucket) => {
        const count = counts.get(bucket.name);
        // Never read as 0: an attempt that could not be counted must not be allowed.
        if (count === undefined) throw new Error(`The database returned no count for rate-limit bucket ${bucket.name}.`);
        return count;
      });
    },

    async decrement(bucket: string, now: Date): Promise<void> {
      // An expired row awaiting deleteExpired is left alone: its window is over and no longer counts.
      await db
        .updateTable(TABLE)
        .set((eb) => ({ count: eb('count', '-', 1) }))
        .where('bucket', '=', bucket)
        .where('count', '>', 0)
        .where('expires_at', '>', toInstantColumn(now))
        .execute();
    },

    async deleteExpired(now: Date): Promise<number> {
      const result = await db.deleteFrom(TABLE).where('expires_at', '<=', toInstantColumn(now)).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
