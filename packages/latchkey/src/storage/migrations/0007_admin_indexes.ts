/**
 * The indexes the admin's users list needs to stay fast at a million users (bench/admin-users.ts;
 * docs/performance.md, "The admin's users list"):
 *
 * - A search is a prefix match on `lower(email)` and on `username_key` (LIKE 'abc%'). On PostgreSQL
 *   a b-tree serves LIKE only with the `text_pattern_ops` operator class (or under the C
 *   collation), so each gets one: a search then reads the few matching rows instead of scanning the
 *   table. SQLite cannot use an index for a LIKE on an expression, so it gets none.
 * - The staff, superuser and inactive filters pick out few users among many: a partial index of
 *   the ids of each (small, and cheap to keep up) lets the newest-first page read them in order.
 *   The other side of each filter (not staff, active) is most users, which the id order finds at once.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { UsernameType } from '../../config/settings.js';
import type { DatabaseDialect } from '../kysely/dialect.js';

const PARTIAL = [
  { name: 'latchkey_users_staff_ids', column: 'is_staff', value: true },
  { name: 'latchkey_users_superuser_ids', column: 'is_superuser', value: true },
  { name: 'latchkey_users_inactive_ids', column: 'is_active', value: false },
] as const;

export function adminIndexesMigration(dialect: DatabaseDialect, usernameType: UsernameType): Migration {
  const prefixIndexes = dialect === 'postgres' ? ['latchkey_users_email_prefix', ...(usernameType === 'username' ? ['latchkey_users_username_key_prefix'] : [])] : [];
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'postgres') {
        await sql`create index latchkey_users_email_prefix on latchkey_users (lower(email) text_pattern_ops)`.execute(db);
        if (usernameType === 'username') await sql`create index latchkey_users_username_key_prefix on latchkey_users (username_key text_pattern_ops)`.execute(db);
      }
      for (const index of PARTIAL) {
        await db.schema.createIndex(index.name).on('latchkey_users').column('id').where(sql.ref(index.column), '=', sql.lit(index.value)).execute();
      }
    },

    async down(db: Kysely<unknown>): Promise<void> {
      for (const name of [...PARTIAL.map((index) => index.name), ...prefixIndexes]) await db.schema.dropIndex(name).execute();
    },
  };
}
