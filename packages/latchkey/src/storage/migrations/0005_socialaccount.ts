/**
 * Social sign-in (allauth.socialaccount): the provider apps kept in the database, the users'
 * accounts at providers, and the providers' tokens for those accounts. Secrets arrive encrypted
 * (socialaccount/model.ts), so the `sealed_*` columns hold ciphertext only.
 */
import { sql, type ColumnDefinitionBuilder, type Kysely, type Migration } from 'kysely';
import type { DatabaseDialect } from '../kysely/dialect.js';

export function socialAccountMigration(dialect: DatabaseDialect): Migration {
  const instant = dialect === 'sqlite' ? 'text' : 'timestamptz';
  // As in 0001: ids are never reused, so a stale reference cannot name a new row.
  const autoIncrementId = (column: ColumnDefinitionBuilder): ColumnDefinitionBuilder =>
    dialect === 'sqlite' ? column.primaryKey().autoIncrement() : column.primaryKey().generatedByDefaultAsIdentity();

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('latchkey_social_apps')
        .addColumn('id', 'integer', autoIncrementId)
        .addColumn('provider', 'text', (column) => column.notNull())
        /** '' for the usual one app of a provider type. */
        .addColumn('provider_id', 'text', (column) => column.notNull().defaultTo(''))
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('client_id', 'text', (column) => column.notNull())
        .addColumn('sealed_secret', 'text', (column) => column.notNull().defaultTo(''))
        .addColumn('key', 'text', (column) => column.notNull().defaultTo(''))
        /** JSON text. */
        .addColumn('settings', 'text', (column) => column.notNull().defaultTo('{}'))
        // Named, so that PostgreSQL reports a violation by a name the repository maps to
        // 'social_app_exists'.
        .addUniqueConstraint('latchkey_social_apps_provider_unique', ['provider', 'provider_id'])
        .execute();

      await db.schema
        .createTable('latchkey_social_accounts')
        .addColumn('id', 'integer', autoIncrementId)
        .addColumn('user_id', 'integer', (column) => column.notNull().references('latchkey_users.id').onDelete('cascade'))
        .addColumn('provider', 'text', (column) => column.notNull())
        .addColumn('uid', 'text', (column) => column.notNull())
        /** JSON text: what the provider said at the last login. */
        .addColumn('extra_data', 'text', (column) => column.notNull().defaultTo('{}'))
        .addColumn('date_joined', instant, (column) => column.notNull())
        .addColumn('last_login', instant, (column) => column.notNull())
        // One account per (provider, uid), whoever holds it: the constraint decides between two
        // parallel connects, and its index serves the lookup of every social login.
        .addUniqueConstraint('latchkey_social_accounts_provider_uid_unique', ['provider', 'uid'])
        .execute();
      await db.schema.createIndex('latchkey_social_accounts_user_id_index').on('latchkey_social_accounts').column('user_id').execute();

      await db.schema
        .createTable('latchkey_social_tokens')
        .addColumn('id', 'integer', autoIncrementId)
        .addColumn('account_id', 'integer', (column) => column.notNull().references('latchkey_social_accounts.id').onDelete('cascade'))
        // Null for an app from the settings; a deleted app's tokens stay with their accounts.
        .addColumn('app_id', 'integer', (column) => column.references('latchkey_social_apps.id').onDelete('set null'))
        .addColumn('sealed_token', 'text', (column) => column.notNull())
        .addColumn('sealed_token_secret', 'text', (column) => column.notNull().defaultTo(''))
        .addColumn('expires_at', instant)
        .execute();
      // One token per (account, app). A plain unique key on (account_id, app_id) would let any
      // number of rows with a null app through (nulls never collide), so the key folds null into
      // 0, which no app id takes (ids start at 1). It is also the conflict target of the upsert
      // that stores a token, which makes parallel saves leave one row; led by account_id, it
      // serves the per-account listing. Both SQLite and PostgreSQL accept the expression.
      await db.schema
        .createIndex('latchkey_social_tokens_account_app_unique')
        .on('latchkey_social_tokens')
        .expression(sql`account_id, (coalesce(app_id, 0))`)
        .unique()
        .execute();
      // The app's side of the foreign key, which deleting an app searches.
      await db.schema.createIndex('latchkey_social_tokens_app_id_index').on('latchkey_social_tokens').column('app_id').execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('latchkey_social_tokens').execute();
      await db.schema.dropTable('latchkey_social_accounts').execute();
      await db.schema.dropTable('latchkey_social_apps').execute();
    },
  };
}
