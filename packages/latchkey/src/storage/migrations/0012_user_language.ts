/**
 * The language a person chose (POST /i18n/setlang/ while signed in): kept on the account so that
 * their pages and their mails follow it on every browser, and mails sent later by the outbox,
 * the admin or the CLI too (docs/translations.md). '' is "none chosen": the request decides.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export function userLanguageMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('latchkey_users').addColumn('language', 'varchar(16)', (column) => column.notNull().defaultTo('')).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await sql`alter table latchkey_users drop column language`.execute(db);
    },
  };
}
