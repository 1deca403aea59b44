/**
 * The versioned migrations, listed statically (no file-system scanning, so bundling or a changed
 * working directory cannot lose one), and built for the project's dialect and username type.
 * Kysely applies them in name order and records each in `latchkey_migrations`.
 */
import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import { LatchkeyError } from '../../core/errors.js';
import { isMissingTableError, type DatabaseDialect } from '../kysely/dialect.js';
import type { DatabaseSchema } from '../kysely/schema.js';
import type { UsernameType } from '../../config/settings.js';
import { initialMigration } from './0001_initial.js';
import { auditAndRateLimitsMigration } from './0002_audit_and_rate_limits.js';
import { mfaMigration } from './0003_mfa.js';
import { apiTokensMigration } from './0004_api_tokens.js';
import { socialAccountMigration } from './0005_socialaccount.js';
import { adminPermissionsMigration } from './0006_admin_permissions.js';
import { adminIndexesMigration } from './0007_admin_indexes.js';
import { auditTargetUserMigration } from './0008_audit_target_user.js';
import { webauthnMigration } from './0009_webauthn.js';
import { mailOutboxMigration } from './0010_mail_outbox.js';
import { sealedSessionDataMigration } from './0011_sealed_session_data.js';
import { userLanguageMigration } from './0012_user_language.js';

export const MIGRATION_TABLE = 'latchkey_migrations';
export const MIGRATION_LOCK_TABLE = 'latchkey_migrations_lock';

/** Every migration, oldest first. Add new ones at the end; never edit a released one. */
export function latchkeyMigrations(dialect: DatabaseDialect, usernameType: UsernameType): Record<string, Migration> {
  return {
    '0001_initial': initialMigration(dialect, usernameType),
    '0002_audit_and_rate_limits': auditAndRateLimitsMigration(dialect),
    '0003_mfa': mfaMigration(dialect),
    '0004_api_tokens': apiTokensMigration(dialect),
    '0005_socialaccount': socialAccountMigration(dialect),
    '0006_admin_permissions': adminPermissionsMigration(),
    '0007_admin_indexes': adminIndexesMigration(dialect, usernameType),
    '0008_audit_target_user': auditTargetUserMigration(dialect),
    '0009_webauthn': webauthnMigration(),
    '0010_mail_outbox': mailOutboxMigration(dialect),
    '0011_sealed_session_data': sealedSessionDataMigration(),
    '0012_user_language': userLanguageMigration(),
  };
}

/**
 * Where the bookkeeping tables are: Kysely decides whether one exists by listing the tables of
 * every schema. Naming the current schema keeps a `latchkey_migrations` table of another schema in
 * the same PostgreSQL database (another project, a parallel test run) from being taken for ours.
 */
export async function migrationSchemaOf(db: Kysely<DatabaseSchema>, dialect: DatabaseDialect): Promise<string | undefined> {
  return dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
}

export async function createMigrator(db: Kysely<DatabaseSchema>, dialect: DatabaseDialect, usernameType: UsernameType): Promise<Migrator> {
  const migrations = latchkeyMigrations(dialect, usernameType);
  const schema = await migrationSchemaOf(db, dialect);
  return new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
}

/** The username type the database was migrated for, or undefined when it is not migrated yet. */
export async function readMigratedUsernameType(db: Kysely<DatabaseSchema>): Promise<UsernameType | undefined> {
  try {
    const row = await db.selectFrom('latchkey_meta').select('value').where('name', '=', 'username_type').executeTakeFirst();
    return row?.value === 'username' || row?.value === 'email' ? row.value : undefined;
  } catch (error) {
    if (isMissingTableError(error)) {
      return undefined;
    }
    throw error;
  }
}

/**
 * The username type shapes the schema (a username column and its unique key exist only for
 * 'username'; the email column is unique only for 'email'). Opening a database built for the other
 * type would fail later with puzzling SQL errors, or worse, run without the uniqueness the project
 * relies on; so it stops here with a message saying what to change.
 */
export async function assertUsernameTypeMatches(db: Kysely<DatabaseSchema>, usernameType: UsernameType, location: string): Promise<void> {
  const migratedFor = await readMigratedUsernameType(db);
  if (migratedFor !== undefined && migratedFor !== usernameType) {
    throw new LatchkeyError(
      'configuration_invalid',
      `The database at ${location} was migrated for username_type '${migratedFor}', but the project is configured with '${usernameType}'. Use the project's original username_type or a new database.`,
    );
  }
}
