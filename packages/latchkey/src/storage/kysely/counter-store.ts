/**
 * Rate-limit counters in the project's database (table latchkey_rate_limit_counters, migration
 * 0002), used when REDIS_URL is not set. Every instance sharing the database shares the counts.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from './schema.js';
import { toInstantColumn } from './schema.js';
import { fixedWindow, type CounterStore } from '../../core/rate-limit/counter-store.js';

const TABLE = 'latchkey_rate_limit_counters';

/**
 * Give it the database itself, never an open transaction: a counter must be committed the moment
 * it is counted, or a rolled-back request would undo its attempt and let the next one through.
 */
export function createDatabaseCounterStore(db: Kysely<DatabaseSchema>): CounterStore {
  return {
    async increment(bucket: string, windowSeconds: number, now: Date): Promise<number> {
      const { end } = fixedWindow(now, windowSeconds);
      // One statement, so the database serializes concurrent increments on the row itself: no
      // read-then-write gap in which two requests could read the same count. SQLite (3.35+) and
      // PostgreSQL both accept this upsert with RETURNING. The expiry is set by the insert only;
      // every increment of a bucket falls in the same window, so it could not change anyway.
      const row = await db
        .insertInto(TABLE)
        .values({ bucket, count: 1, expires_at: toInstantColumn(end) })
        .onConflict((conflict) => conflict.column('bucket').doUpdateSet((eb) => ({ count: eb(`${TABLE}.count`, '+', 1) })))
        .returning('count')
        .executeTakeFirstOrThrow();
      return Number(row.count);
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
