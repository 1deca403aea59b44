/**
 * The mail outbox: a mail written in the same transaction as the change it tells of (a signup's
 * confirmation, a password change's notice), sent after the commit and tried again by a sweep
 * when the sending instance failed or died, so that no crash loses a mail the change promised.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { DatabaseDialect } from '../kysely/dialect.js';

export function mailOutboxMigration(dialect: DatabaseDialect): Migration {
  const instant = dialect === 'sqlite' ? 'text' : 'timestamptz';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('latchkey_mail_outbox')
        .addColumn('id', 'integer', (column) => (dialect === 'sqlite' ? column.primaryKey().autoIncrement() : column.primaryKey().generatedByDefaultAsIdentity()))
        .addColumn('queued_at', instant, (column) => column.notNull())
        /** JSON array text; kept when the row is abandoned, so the operator knows who missed a mail. */
        .addColumn('recipients', 'text', (column) => column.notNull())
        .addColumn('subject', 'text', (column) => column.notNull())
        /** JSON text of the whole message; '' once abandoned (it holds live links: a secret at rest). */
        .addColumn('message', 'text', (column) => column.notNull())
        .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('next_attempt_at', instant, (column) => column.notNull())
        /** Set by whoever is sending it: nobody else may until it lapses. */
        .addColumn('claimed_until', instant)
        .addColumn('last_error', 'text')
        .addColumn('abandoned_at', instant)
        .execute();
      // The sweep's question: the oldest rows still to send that are due.
      await db.schema
        .createIndex('latchkey_mail_outbox_due_index')
        .on('latchkey_mail_outbox')
        .columns(['next_attempt_at', 'id'])
        .where(sql.ref('abandoned_at'), 'is', null)
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('latchkey_mail_outbox').execute();
    },
  };
}
