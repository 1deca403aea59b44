/**
 * Rate-limit counters in the project's database (table latchkey_rate_limit_counters, migration
 * 0002), used when REDIS_URL is not set. Every instance sharing the database shares the counts.
 */
import { sql, type Kysely } from 'kysely';
import type { DatabaseDialect } from './dialect.js';
import type { DatabaseSchema } from './schema.js';
import { toInstantColumn } from './schema.js';
import { fitsWithinLimits, inLockOrder, type CounterStore, type CountOutcome, type LimitedBucket } from '../../core/rate-limit/counter-store.js';

const TABLE = 'latchkey_rate_limit_counters';

type Db = Kysely<DatabaseSchema>;

/** The buckets' counts as they stand, in the order given; 0 for a bucket never counted. */
async function countsOf(db: Db, buckets: readonly LimitedBucket[]): Promise<number[]> {
  const rows = await db
    .selectFrom(TABLE)
    .select(['bucket', 'count'])
    .where(
      'bucket',
      'in',
      buckets.map((bucket) => bucket.name),
    )
    .execute();
  const counts = new Map(rows.map((row) => [row.bucket, Number(row.count)]));
  return buckets.map((bucket) => counts.get(bucket.name) ?? 0);
}

/** The counts an insert-or-increment returned, in the order of `buckets`. */
function countsReturned(buckets: readonly LimitedBucket[], rows: ReadonlyArray<{ bucket: string; count: number | string }>): number[] {
  const counts = new Map(rows.map((row) => [row.bucket, Number(row.count)]));
  return buckets.map((bucket) => {
    const count = counts.get(bucket.name);
    // Never read as 0: an attempt that could not be counted must not be allowed.
    if (count === undefined) throw new Error(`The database returned no count for rate-limit bucket ${bucket.name}.`);
    return count;
  });
}

/**
 * SQLite: one statement, which SQLite runs under the database's write lock from its first read to
 * its last write, so the check and the count are one step for every connection and process. It
 * counts the attempt in every bucket only where none of them is at its limit; when it counts
 * nothing, the counts are read afterwards, for the wait they imply. (A transaction would do, but
 * two connections of one process would then wait on each other inside one thread.)
 */
async function countWithinLimitsOnSqlite(db: Db, buckets: readonly LimitedBucket[]): Promise<CountOutcome> {
  const attempt = sql.join(buckets.map((bucket) => sql`(${bucket.name}, ${toInstantColumn(bucket.windowEnd)}, ${bucket.limit})`));
  const result = await sql<{ bucket: string; count: number }>`
    with attempt(bucket, expires_at, max_count) as (values ${attempt})
    insert into ${sql.table(TABLE)} (bucket, count, expires_at)
    select bucket, 1, expires_at from attempt
    where not exists (
      select 1 from attempt as bound left join ${sql.table(TABLE)} as counter on counter.bucket = bound.bucket
      where coalesce(counter.count, 0) >= bound.max_count
    )
    on conflict (bucket) do update set count = ${sql.ref(`${TABLE}.count`)} + 1
    returning bucket, count`.execute(db);
  if (result.rows.length === 0) return { counted: false, counts: await countsOf(db, buckets) };
  return { counted: true, counts: countsReturned(buckets, result.rows) };
}

/**
 * PostgreSQL: a transaction that counts the attempt first, in one upsert, which locks every row it
 * touches until the transaction ends (rows in one order, so two attempts never wait on each other
 * in a cycle). A concurrent attempt on the same buckets waits for that, then reads counts that
 * already include or exclude this one: no read-then-write gap lets two attempts read the same
 * count. When a bucket turns out to have been full, the attempt is taken back before the rows are
 * let go, so no other attempt ever sees it counted.
 */
async function countWithinLimitsOnPostgres(db: Db, buckets: readonly LimitedBucket[]): Promise<CountOutcome> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .insertInto(TABLE)
      .values(inLockOrder(buckets).map((bucket) => ({ bucket: bucket.name, count: 1, expires_at: toInstantColumn(bucket.windowEnd) })))
      .onConflict((conflict) => conflict.column('bucket').doUpdateSet((eb) => ({ count: eb(`${TABLE}.count`, '+', 1) })))
      .returning(['bucket', 'count'])
      .execute();
    const countsAfter = countsReturned(buckets, rows);
    const countsBefore = countsAfter.map((count) => count - 1);
    if (fitsWithinLimits(buckets, countsBefore)) return { counted: true, counts: countsAfter };
    await trx
      .updateTable(TABLE)
      .set((eb) => ({ count: eb('count', '-', 1) }))
      .where(
        'bucket',
        'in',
        buckets.map((bucket) => bucket.name),
      )
      .execute();
    return { counted: false, counts: countsBefore };
  });
}

/**
 * Give it the database itself, never an open transaction: a counter must be committed the moment
 * it is counted, or a rolled-back request would undo its attempt and let the next one through.
 * The expiry is set when a bucket is created only: every count of a bucket falls in its one window.
 */
export function createDatabaseCounterStore(db: Db, dialect: DatabaseDialect): CounterStore {
  return {
    async countWithinLimits(buckets: readonly LimitedBucket[]): Promise<CountOutcome> {
      if (buckets.length === 0) return { counted: true, counts: [] };
      return dialect === 'sqlite' ? countWithinLimitsOnSqlite(db, buckets) : countWithinLimitsOnPostgres(db, buckets);
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

    async remove(buckets: readonly string[]): Promise<void> {
      // One bucket per statement, in name order, so that a removal holds one row lock at a time: a
      // single DELETE of several rows would lock them in whatever order it finds them, and meet an
      // attempt that holds one of them (locked in name order) while waiting for another, in a
      // deadlock PostgreSQL breaks by failing one of the two.
      for (const bucket of [...buckets].sort()) await db.deleteFrom(TABLE).where('bucket', '=', bucket).execute();
    },

    async deleteExpired(now: Date): Promise<number> {
      const result = await db.deleteFrom(TABLE).where('expires_at', '<=', toInstantColumn(now)).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
