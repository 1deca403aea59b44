/**
 * The first schema: users, their email addresses, server-side sessions, and the project facts the
 * schema was built for. A migration is frozen once released: later changes go in a new migration,
 * and the names and index names written here stay literal (the unique-violation mapping in
 * kysely/dialect.ts refers to them).
 */
import { sql, type ColumnDefinitionBuilder, type Kysely, type Migration } from 'kysely';
import type { DatabaseDialect } from '../kysely/dialect.js';
import type { UsernameType } from '../../config/settings.js';

export function initialMigration(dialect: DatabaseDialect, usernameType: UsernameType): Migration {
  // SQLite keeps instants as ISO 8601 TEXT (it has no timestamp type); PostgreSQL as timestamptz.
  const instant = dialect === 'sqlite' ? 'text' : 'timestamptz';
  // AUTOINCREMENT on SQLite never reuses the id of a deleted user, as an identity column on
  // PostgreSQL never does: a stale reference (a log line, an old session) can't name a new account.
  const autoIncrementId = (column: ColumnDefinitionBuilder): ColumnDefinitionBuilder =>
    dialect === 'sqlite' ? column.primaryKey().autoIncrement() : column.primaryKey().generatedByDefaultAsIdentity();

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      let users = db.schema.createTable('latchkey_users').addColumn('id', 'integer', autoIncrementId);
      if (usernameType === 'username') {
        users = users.addColumn('username', 'text', (column) => column.notNull()).addColumn('username_key', 'text', (column) => column.notNull());
      }
      await users
        .addColumn('email', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('password', 'text', (column) => column.notNull())
        .addColumn('is_active', 'boolean', (column) => column.notNull())
        .addColumn('is_staff', 'boolean', (column) => column.notNull())
        .addColumn('is_superuser', 'boolean', (column) => column.notNull())
        .addColumn('date_joined', instant, (column) => column.notNull())
        .addColumn('last_login', instant)
        .execute();
      if (usernameType === 'username') {
        // Uniqueness on the folded key, not the display form: "ＡＤＭＩＮ" and "admin" are one name.
        await db.schema.createIndex('latchkey_users_username_key_unique').on('latchkey_users').column('username_key').unique().execute();
        // Several users of a username project may share an address or have none ('').
        await db.schema.createIndex('latchkey_users_email_index').on('latchkey_users').column('email').execute();
      } else {
        // The unique index is what makes 20 parallel signups with one address yield one account.
        await db.schema.createIndex('latchkey_users_email_unique').on('latchkey_users').column('email').unique().execute();
      }

      await db.schema
        .createTable('latchkey_email_addresses')
        .addColumn('id', 'integer', autoIncrementId)
        .addColumn('user_id', 'integer', (column) => column.notNull().references('latchkey_users.id').onDelete('cascade'))
        .addColumn('email', 'text', (column) => column.notNull())
        .addColumn('verified', 'boolean', (column) => column.notNull())
        .addColumn('is_primary', 'boolean', (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex('latchkey_email_addresses_user_email_unique')
        .on('latchkey_email_addresses')
        .columns(['user_id', 'email'])
        .unique()
        .execute();
      // An address verified by one user cannot be verified by another: whoever proves ownership
      // first holds it, and nobody can take over an account by verifying its address elsewhere.
      await db.schema
        .createIndex('latchkey_email_addresses_verified_email_unique')
        .on('latchkey_email_addresses')
        .column('email')
        .unique()
        .where(sql.ref('verified'), '=', sql.lit(true))
        .execute();
      await db.schema
        .createIndex('latchkey_email_addresses_one_primary')
        .on('latchkey_email_addresses')
        .column('user_id')
        .unique()
        .where(sql.ref('is_primary'), '=', sql.lit(true))
        .execute();
      await db.schema.createIndex('latchkey_email_addresses_email_index').on('latchkey_email_addresses').column('email').execute();

      await db.schema
        .createTable('latchkey_sessions')
        .addColumn('id_hash', 'text', (column) => column.primaryKey())
        .addColumn('user_id', 'integer', (column) => column.references('latchkey_users.id').onDelete('cascade'))
        .addColumn('data', 'text', (column) => column.notNull())
        .addColumn('created_at', instant, (column) => column.notNull())
        .addColumn('last_seen_at', instant, (column) => column.notNull())
        .addColumn('expires_at', instant, (column) => column.notNull())
        .addColumn('ip_address', 'text', (column) => column.notNull())
        .addColumn('user_agent', 'text', (column) => column.notNull())
        .execute();
      await db.schema.createIndex('latchkey_sessions_user_id_index').on('latchkey_sessions').column('user_id').execute();
      await db.schema.createIndex('latchkey_sessions_expires_at_index').on('latchkey_sessions').column('expires_at').execute();

      // The username type shapes the schema, so the database records which one it was built for.
      await db.schema
        .createTable('latchkey_meta')
        .addColumn('name', 'text', (column) => column.primaryKey())
        .addColumn('value', 'text', (column) => column.notNull())
        .execute();
      await sql`insert into ${sql.table('latchkey_meta')} (${sql.ref('name')}, ${sql.ref('value')}) values (${'username_type'}, ${usernameType})`.execute(db);
    },

    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['latchkey_meta', 'latchkey_sessions', 'latchkey_email_addresses', 'latchkey_users']) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
