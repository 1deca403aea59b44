/**
 * The indexes the admin's users list needs to stay fast at a million users (bench/admin-users.ts;
 * docs/performance.md, "The admin's users list"). storage/kysely/user-search.ts writes its search
 * and its orders on exactly these expressions: a database uses an index on an expression only for
 * that same expression, collation included (user-search.test.ts asks each planner).
 *
 * - Text is indexed under a collation that compares by code point: "C" on PostgreSQL, NOCASE on
 *   SQLite (over text already lower-cased, the same order). So one index serves both the order
 *   and a prefix search (LIKE 'abc%' is one range of it): PostgreSQL uses a b-tree for LIKE only
 *   under "C" (or with text_pattern_ops, which cannot sort), SQLite only under NOCASE.
 * - One index per sort order, (key, id), read forwards or backwards, which a keyset page (key >= v
 *   and (key > v or id > n)) enters in the middle: the username key (where there are usernames),
 *   the address, the name, the join date. The id order is the primary key's.
 * - The name after its first space, for the search only: "love" finds "Ada Lovelace".
 * - Staff and superusers are few: a partial index of their ids (small, and cheap to keep up) lets
 *   a page read them all, in order or to sort them. Inactive users can be many (2% in the bench,
 *   far more on an old site), and reading them all to sort them costs a heap read each, so they
 *   get a partial twin of every order's index: a page of them walks its order. The other side of
 *   each filter (not staff, active) is most users, which any order's index finds at once.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { UsernameType } from '../../config/settings.js';
import type { DatabaseDialect } from '../kysely/dialect.js';

const PARTIAL = [
  { name: 'latchkey_users_staff_ids', column: 'is_staff', value: true },
  { name: 'latchkey_users_superuser_ids', column: 'is_superuser', value: true },
  { name: 'latchkey_users_inactive_ids', column: 'is_active', value: false },
] as const;

interface IndexDefinition {
  name: string;
  columns: string;
  where?: string;
}

/** Each order's index (and the name tail's), its name and its columns in this dialect's SQL. */
function orderIndexes(dialect: DatabaseDialect, usernameType: UsernameType): IndexDefinition[] {
  const collation = dialect === 'postgres' ? 'collate "C"' : 'collate nocase';
  const firstSpace = dialect === 'postgres' ? "strpos(name, ' ')" : "instr(name, ' ')";
  return [
    ...(usernameType === 'username' ? [{ name: 'latchkey_users_username_order', columns: `username_key ${collation}, id` }] : []),
    { name: 'latchkey_users_email_order', columns: `(lower(email)) ${collation}, id` },
    { name: 'latchkey_users_name_order', columns: `(lower(name)) ${collation}, id` },
    { name: 'latchkey_users_name_tail_prefix', columns: `(lower(ltrim(substr(name, ${firstSpace} + 1)))) ${collation}` },
    { name: 'latchkey_users_date_joined_order', columns: 'date_joined, id' },
  ];
}

/** The inactive users' twin of each order's index (the id order's is in PARTIAL). */
function inactiveTwins(ordered: IndexDefinition[]): IndexDefinition[] {
  return ordered
    .filter((index) => index.name.endsWith('_order'))
    .map((index) => ({ name: index.name.replace('latchkey_users_', 'latchkey_users_inactive_'), columns: index.columns, where: 'is_active = false' }));
}

export function adminIndexesMigration(dialect: DatabaseDialect, usernameType: UsernameType): Migration {
  const plain = orderIndexes(dialect, usernameType);
  const ordered = [...plain, ...inactiveTwins(plain)];
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // Names, columns and conditions are this file's constants, never input.
      for (const index of ordered) {
        const where = index.where === undefined ? sql`` : sql` where ${sql.raw(index.where)}`;
        await sql`create index ${sql.raw(index.name)} on latchkey_users (${sql.raw(index.columns)})${where}`.execute(db);
      }
      for (const index of PARTIAL) {
        await db.schema.createIndex(index.name).on('latchkey_users').column('id').where(sql.ref(index.column), '=', sql.lit(index.value)).execute();
      }
    },

    async down(db: Kysely<unknown>): Promise<void> {
      for (const name of [...PARTIAL.map((index) => index.name), ...ordered.map((index) => index.name)]) await db.schema.dropIndex(name).execute();
    },
  };
}
