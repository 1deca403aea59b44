/**
 * One-time claims in the project's database (table latchkey_one_time_claims, migration 0003),
 * used when REDIS_URL is not set. Every instance sharing the database shares the claims.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from './schema.js';
import { toInstantColumn } from './schema.js';
import type { OneTimeClaimStore } from '../../core/one-time-claims/one-time-claim-store.js';

const TABLE = 'latchkey_one_time_claims';

/**
 * Give it the database itself, never an open transaction: a claim must be committed the moment it
 * is made. Inside a transaction that later rolled back, the claim would vanish and the same code
 * could be replayed; and a second claim of the key would wait for that transaction to end instead
 * of being refused at once.
 */
export function createDatabaseOneTimeClaimStore(db: Kysely<DatabaseSchema>): OneTimeClaimStore {
  return {
    async claim(key: string, ttlSeconds: number, now: Date): Promise<boolean> {
      const expiresAt = toInstantColumn(new Date(now.getTime() + ttlSeconds * 1000));
      // One statement, so the database decides between parallel claims on the row itself: a new
      // key is inserted; an existing one is taken over only when its claim has expired (a row
      // that deleteExpired has not removed yet). A live claim matches neither, so nothing is
      // written and nothing returned. SQLite (3.35+) and PostgreSQL both accept this upsert with
      // RETURNING; on PostgreSQL a parallel claim of the same key waits for the first to commit
      // and then finds it live.
      const rows = await db
        .insertInto(TABLE)
        .values({ key, expires_at: expiresAt })
        .onConflict((conflict) =>
          conflict
            .column('key')
            .doUpdateSet((eb) => ({ expires_at: eb.ref('excluded.expires_at') }))
            .where(`${TABLE}.expires_at`, '<=', toInstantColumn(now)),
        )
        .returning('key')
        .execute();
      return rows.length > 0;
    },

    async deleteExpired(now: Date): Promise<number> {
      // ISO 8601 strings of one fixed format sort as the instants they denote, so on SQLite the
      // TEXT comparison is a time comparison; PostgreSQL compares timestamptz values.
      const result = await db.deleteFrom(TABLE).where('expires_at', '<=', toInstantColumn(now)).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
