/**
 * API tokens (Django REST framework's authtoken): at most one per user, valid until deleted. The
 * key itself is never stored: a keyed hash finds the token, and a copy of the key encrypted under
 * the project's secret key lets the login endpoint hand the same key out again (tokens/api-tokens.ts).
 */
import type { Kysely, Migration } from 'kysely';
import type { DatabaseDialect } from '../kysely/dialect.js';

export function apiTokensMigration(dialect: DatabaseDialect): Migration {
  const instant = dialect === 'sqlite' ? 'text' : 'timestamptz';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('latchkey_api_tokens')
        // The user is the key: one token per user is the database's rule, so that of two parallel
        // first logins one insert wins and the other finds its token (on conflict do nothing).
        // The token goes with the account.
        .addColumn('user_id', 'integer', (column) => column.primaryKey().references('latchkey_users.id').onDelete('cascade'))
        /** keyedHash(SECRET_KEY, 'api-token', key): what a request's key is looked up by. */
        .addColumn('key_hash', 'text', (column) => column.notNull())
        /** The key encrypted under the secret key, bound to this user (core/encryption.ts). */
        .addColumn('sealed_key', 'text', (column) => column.notNull())
        .addColumn('created_at', instant, (column) => column.notNull())
        // Named, so that PostgreSQL reports a violation by a name the repository knows; the
        // index it creates serves the lookup of every authenticated request.
        .addUniqueConstraint('latchkey_api_tokens_key_hash_unique', ['key_hash'])
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('latchkey_api_tokens').execute();
    },
  };
}
