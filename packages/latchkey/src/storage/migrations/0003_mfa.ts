/**
 * Multi-factor authentication: each user's authenticators (TOTP, recovery codes), the recovery
 * codes already spent, and the one-time claims that keep a code from being accepted twice (kept in
 * the database when REDIS_URL is not set, so that several instances sharing the database agree).
 */
import type { Kysely, Migration } from 'kysely';
import type { DatabaseDialect } from '../kysely/dialect.js';

export function mfaMigration(dialect: DatabaseDialect): Migration {
  const instant = dialect === 'sqlite' ? 'text' : 'timestamptz';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('latchkey_authenticators')
        .addColumn('id', 'integer', (column) =>
          dialect === 'sqlite' ? column.primaryKey().autoIncrement() : column.primaryKey().generatedByDefaultAsIdentity(),
        )
        .addColumn('user_id', 'integer', (column) => column.notNull().references('latchkey_users.id').onDelete('cascade'))
        .addColumn('type', 'text', (column) => column.notNull())
        /** JSON text: the type's own state, its secrets encrypted by the MFA domain. */
        .addColumn('data', 'text', (column) => column.notNull())
        .addColumn('created_at', instant, (column) => column.notNull())
        .addColumn('last_used_at', instant)
        .execute();
      // One authenticator of each type per user: the index decides between two parallel
      // activations (the repository maps its refusal to 'authenticator_exists'), and, led by
      // user_id, it also serves every per-user lookup.
      await db.schema
        .createIndex('latchkey_authenticators_user_type_unique')
        .on('latchkey_authenticators')
        .columns(['user_id', 'type'])
        .unique()
        .execute();

      // A row per spent recovery code. The primary key makes spending a code a single insert that
      // at most one of any number of parallel attempts can make; the codes go with their
      // authenticator, so a regenerated set starts with none spent.
      await db.schema
        .createTable('latchkey_recovery_code_uses')
        .addColumn('authenticator_id', 'integer', (column) => column.notNull().references('latchkey_authenticators.id').onDelete('cascade'))
        .addColumn('code_index', 'integer', (column) => column.notNull())
        .addColumn('used_at', instant, (column) => column.notNull())
        .addPrimaryKeyConstraint('latchkey_recovery_code_uses_pkey', ['authenticator_id', 'code_index'])
        .execute();

      await db.schema
        .createTable('latchkey_one_time_claims')
        /** What was claimed, e.g. `mfa:totp:<authenticator id>:<time step>` (no code, no secret). */
        .addColumn('key', 'text', (column) => column.primaryKey())
        .addColumn('expires_at', instant, (column) => column.notNull())
        .execute();
      await db.schema.createIndex('latchkey_one_time_claims_expires_index').on('latchkey_one_time_claims').column('expires_at').execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('latchkey_one_time_claims').execute();
      await db.schema.dropTable('latchkey_recovery_code_uses').execute();
      await db.schema.dropTable('latchkey_authenticators').execute();
    },
  };
}
