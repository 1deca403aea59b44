/**
 * The project's own migrations (docs/project-data.md): its tables beside Latchkey's, in the same
 * database. They are applied after Latchkey's, in the order of their names (`manage makemigration`
 * names them by date), and recorded in a bookkeeping table of their own, so that a project's
 * migration and one of Latchkey's can never be taken for each other.
 */
import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import type { UserFieldType } from '../../core/user-fields.js';
import type { DatabaseDialect } from '../kysely/dialect.js';
import { userFieldColumnType } from '../kysely/user-field-columns.js';

export const PROJECT_MIGRATION_TABLE = 'project_migrations';
export const PROJECT_MIGRATION_LOCK_TABLE = 'project_migrations_lock';

/** Which database a migration runs on, for the statements that differ between them. */
export interface ProjectMigrationContext {
  /** The database the migration runs on (DATABASE_URL's kind). */
  dialect: 'sqlite' | 'postgres';
}

/**
 * One migration of the project: `up` changes the schema (Kysely's schema builder, or `sql` for
 * what it lacks), `down` undoes it where that can be done. Each runs in a transaction of its own.
 */
export interface ProjectMigration {
  /** Changes the schema, in the migration's own transaction. */
  up(db: Kysely<object>, context: ProjectMigrationContext): Promise<void>;
  /** Undoes `up`, where that can be done (Latchkey never runs it by itself). */
  down?(db: Kysely<object>, context: ProjectMigrationContext): Promise<void>;
}

/** The project's migrations by name; the names sort in the order they apply (src/migrations/index.ts). */
export type ProjectMigrations = Readonly<Record<string, ProjectMigration>>;

/** A name `manage makemigration` would write: what sorts right and is safe as a file name. */
const MIGRATION_NAME = /^[0-9]{8}_[0-9]{6}_[a-z][a-z0-9_]*$/;

/** Refuses, in one line, a name that would not sort by date or a migration without `up`. */
export function checkProjectMigrations(migrations: ProjectMigrations): string | undefined {
  for (const [name, migration] of Object.entries(migrations)) {
    if (!MIGRATION_NAME.test(name)) return `The project's migration "${name}" is not named as manage makemigration names them (YYYYMMDD_HHMMSS_words): its place in the order would be a guess.`;
    if (typeof (migration as Partial<ProjectMigration> | undefined)?.up !== 'function') return `The project's migration "${name}" has no up() function.`;
  }
  return undefined;
}

/**
 * Each migration in a transaction of its own, as Django runs each atomically, on both databases:
 * a failed one leaves nothing of itself, and those before it stay applied. (Kysely's default is
 * one transaction for a whole run on PostgreSQL and none at all on SQLite, whose schema changes
 * are transactional all the same.)
 */
export function createProjectMigrator(db: Kysely<object>, dialect: DatabaseDialect, migrations: ProjectMigrations, schema: string | undefined): Migrator {
  const context: ProjectMigrationContext = { dialect };
  const atomic = (step: (db: Kysely<object>, context: ProjectMigrationContext) => Promise<void>) => (connection: Kysely<object>) =>
    connection.transaction().execute((trx) => step(trx, context));
  const asKysely: Record<string, Migration> = Object.fromEntries(
    Object.entries(migrations).map(([name, migration]) => {
      const down = migration.down?.bind(migration);
      return [name, { up: atomic(migration.up.bind(migration)), ...(down ? { down: atomic(down) } : {}) }];
    }),
  );
  return new Migrator({
    db,
    disableTransactions: true,
    provider: { getMigrations: () => Promise.resolve(asKysely) },
    migrationTableName: PROJECT_MIGRATION_TABLE,
    migrationLockTableName: PROJECT_MIGRATION_LOCK_TABLE,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
}

/**
 * A column of latchkey_users for one of the project's user fields (docs/user-fields.md), in the
 * type Latchkey stores that kind in on this database: what `manage makemigration` writes into a
 * migration for each declared field without one. The name and kind are the migration's own, so
 * that it stays what it was when the declaration changes later.
 */
export async function addUserFieldColumn(db: Kysely<object>, context: ProjectMigrationContext, name: string, type: UserFieldType): Promise<void> {
  const column = userFieldColumnType(type, context.dialect);
  await sql`alter table latchkey_users add column ${sql.id(name)} ${sql.raw(column.sql)}${sql.raw(column.notNull ? ` not null default ${column.default}` : '')}`.execute(db);
}

/** Removes a user field's column (the `down` of addUserFieldColumn). */
export async function dropUserFieldColumn(db: Kysely<object>, name: string): Promise<void> {
  await sql`alter table latchkey_users drop column ${sql.id(name)}`.execute(db);
}
