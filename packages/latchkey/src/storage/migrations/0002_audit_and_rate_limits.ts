/**
 * The account events' audit trail, and the counters behind rate limits (kept in the database when
 * REDIS_URL is not set, so that several instances sharing the database agree).
 */
import type { Kysely, Migration } from 'kysely';
import type { DatabaseDialect } from '../kysely/dialect.js';

export function auditAndRateLimitsMigration(dialect: DatabaseDialect): Migration {
  const instant = dialect === 'sqlite' ? 'text' : 'timestamptz';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('latchkey_audit_log')
        .addColumn('id', 'integer', (column) =>
          dialect === 'sqlite' ? column.primaryKey().autoIncrement() : column.primaryKey().generatedByDefaultAsIdentity(),
        )
        .addColumn('event', 'text', (column) => column.notNull())
        // Kept when the user is deleted: the trail outlives the account (the id is then dangling).
        .addColumn('user_id', 'integer')
        .addColumn('created_at', instant, (column) => column.notNull())
        .addColumn('ip_address', 'text', (column) => column.notNull())
        .addColumn('user_agent', 'text', (column) => column.notNull())
        /** JSON text: details of the event (an email address, a method), never a secret. */
        .addColumn('data', 'text', (column) => column.notNull())
        .execute();
      await db.schema.createIndex('latchkey_audit_log_user_index').on('latchkey_audit_log').columns(['user_id', 'created_at']).execute();

      await db.schema
        .createTable('latchkey_rate_limit_counters')
        /** The rule's bucket: action, scope (ip/key/user), the hashed subject and the window start. */
        .addColumn('bucket', 'text', (column) => column.primaryKey())
        .addColumn('count', 'integer', (column) => column.notNull())
        .addColumn('expires_at', instant, (column) => column.notNull())
        .execute();
      await db.schema.createIndex('latchkey_rate_limit_counters_expires_index').on('latchkey_rate_limit_counters').column('expires_at').execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('latchkey_rate_limit_counters').execute();
      await db.schema.dropTable('latchkey_audit_log').execute();
    },
  };
}
