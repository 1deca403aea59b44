/**
 * Opens the project's database from DATABASE_URL and hands out the Store, the Kysely instance and
 * the migrations. Opening checks that the database answers and was migrated for the configured
 * username type, so that a bad setting stops start-up with one clear line instead of failing on the
 * first request.
 */
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  sql,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type Driver,
  type SchemaMetadata,
  type SqliteDatabase,
  type SqliteDialectConfig,
  type TableMetadata,
} from 'kysely';
import pg from 'pg';
import { LatchkeyError } from '../core/errors.js';
import { maskUrlCredentials } from '../core/redact.js';
import { parseDatabaseUrl, type DatabaseLocation } from '../config/database-url.js';
import type { DatabaseDialect } from './kysely/dialect.js';
import type { DatabaseSchema } from './kysely/schema.js';
import { executorCredentialReads, postgresCredentialReads, sqliteCredentialReads, type CredentialReads } from './kysely/credential-reads.js';
import { createKyselyStore } from './kysely/store.js';
import { assertUsernameTypeMatches, createMigrator, migrationSchemaOf } from './migrations/index.js';
import { checkProjectMigrations, createProjectMigrator, type ProjectMigrations } from './migrations/project.js';
import type { Store } from '../store.js';
import type { UsernameType } from '../config/settings.js';
import { checkUserFields, NO_USER_FIELDS, type UserFieldSet } from '../core/user-fields.js';
import type { UserShape } from './kysely/user-field-columns.js';

export interface OpenDatabaseOptions {
  url: string;
  usernameType: UsernameType;
  /** The project's own user fields (docs/user-fields.md): read and written with every user. */
  userFields?: UserFieldSet;
  /** How long to wait for PostgreSQL to accept a connection and answer; default 5000 ms. */
  connectTimeoutMs?: number;
  /** PostgreSQL only: the schema to work in (set as search_path on every connection). */
  postgresSchema?: string;
}

export interface Database {
  readonly dialect: DatabaseDialect;
  readonly usernameType: UsernameType;
  readonly userFields: UserFieldSet;
  readonly kysely: Kysely<DatabaseSchema>;
  readonly store: Store;
  /**
   * Applies every pending migration, Latchkey's and then the project's (storage/migrations/project.ts);
   * returns the names applied (none when up to date).
   */
  migrate(project?: ProjectMigrations): Promise<string[]>;
  /** The migrations not applied yet, Latchkey's and then the project's. */
  pendingMigrations(project?: ProjectMigrations): Promise<string[]>;
  /** The project's declared user fields that latchkey_users has no column for yet (a migration to write or apply). */
  missingUserFieldColumns(): Promise<string[]>;
  /** Closes the connections; calling it again does nothing. */
  close(): Promise<void>;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

function refuseMalformedProjectMigrations(project: ProjectMigrations): void {
  const problem = checkProjectMigrations(project);
  if (problem !== undefined) throw new LatchkeyError('configuration_invalid', problem);
}
const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * Kysely begins SQLite transactions DEFERRED. When two processes share one database file, a
 * deferred transaction that reads and then writes can fail at once with SQLITE_BUSY (SQLite cannot
 * wait for a lock upgrade without risking deadlock). BEGIN IMMEDIATE takes the write lock up front,
 * so a second process waits for it (up to the busy timeout) instead of failing.
 */
class ImmediateTransactionSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class LatchkeySqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateTransactionSqliteDriver(this.#config);
  }
}

/**
 * Kysely's PostgreSQL introspector, which its Migrator uses to find its bookkeeping tables, reads
 * every schema of the database and resolves each table by name; a schema dropped meanwhile by
 * someone else (another project, a parallel test run) makes that fail with "schema does not
 * exist". Latchkey only ever needs the tables of its own schema, so it looks only there.
 */
class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const rows = await sql<{ name: string }>`select current_schema() as name`.execute(this.db);
    return rows.rows;
  }

  async getTables(): Promise<TableMetadata[]> {
    const rows = await sql<{ name: string; schema: string; type: string }>`
      select table_name as name, table_schema as schema, table_type as type
      from information_schema.tables where table_schema = current_schema()`.execute(this.db);
    return rows.rows.map((row) => ({ name: row.name, schema: row.schema, isView: row.type === 'VIEW', columns: [] }));
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
}

class LatchkeyPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

/** How many prepared queries a SQLite connection keeps: more than the distinct reads Latchkey makes. */
const READS_KEPT = 200;

/**
 * The connection as Kysely sees it, with each read prepared once: Kysely prepares every query
 * anew, and on SQLite preparing costs about as much as running a simple indexed lookup, which is
 * what every request's authentication does (a session or a token, then its user). Only reads are
 * kept: a SELECT runs to completion and is reset at once (better-sqlite3 runs it synchronously;
 * Latchkey never streams), so a kept one holds no lock and no snapshot between uses. Writes and
 * transaction control are prepared each time, exactly as before, so nothing about how this
 * connection takes SQLite's write lock changes.
 */
function withPreparedReads(database: BetterSqlite3.Database): SqliteDatabase {
  const reads = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string) {
      const kept = reads.get(sql);
      if (kept !== undefined) return kept;
      const statement = database.prepare(sql);
      if (/^\s*select\b/i.test(sql) && statement.reader) {
        if (reads.size >= READS_KEPT) reads.delete(reads.keys().next().value!);
        reads.set(sql, statement);
      }
      return statement;
    },
  };
}

/** A database as opened: Kysely for every query, and the credential reads on the driver itself. */
interface OpenedDatabase {
  kysely: Kysely<DatabaseSchema>;
  credentialReads: CredentialReads;
}

function openSqlite(filename: string, shape: UserShape): OpenedDatabase {
  let database: BetterSqlite3.Database;
  try {
    database = new BetterSqlite3(filename);
    database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    // WAL lets readers proceed during a write; synchronous FULL makes every commit durable before
    // it is reported, so a crash right after "password changed" cannot bring the old one back.
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = FULL');
    // Off by default in SQLite: without it, deleting a user would leave its sessions alive.
    database.pragma('foreign_keys = ON');
  } catch (error) {
    throw new LatchkeyError('database_unavailable', `Cannot open the SQLite database at ${filename}: ${(error as Error).message}.`, { cause: error });
  }
  const kysely = new Kysely<DatabaseSchema>({ dialect: new LatchkeySqliteDialect({ database: withPreparedReads(database) }) });
  return { kysely, credentialReads: sqliteCredentialReads(database, shape, executorCredentialReads(kysely, shape, '?')) };
}

function describeConnectionFailure(error: unknown, connectTimeoutMs: number): string {
  const failure = error as { code?: unknown; message?: unknown; errors?: Array<{ code?: unknown }> };
  // Node reports a refused connection to a name with several addresses as an AggregateError.
  const code = failure.code ?? failure.errors?.[0]?.code;
  const message = typeof failure.message === 'string' ? failure.message : '';
  if (code === 'ECONNREFUSED') return 'connection refused (is PostgreSQL running there?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'unknown host';
  if (code === 'ETIMEDOUT' || /timeout/i.test(message)) return `no answer within ${connectTimeoutMs} ms`;
  if (code === '28P01' || code === '28000') return 'authentication failed';
  if (code === '3D000') return 'the database does not exist';
  return message === '' ? 'unknown error' : message;
}

async function openPostgres(location: DatabaseLocation & { dialect: 'postgres' }, options: OpenDatabaseOptions, shape: UserShape): Promise<OpenedDatabase> {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const schema = options.postgresSchema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) {
    throw new LatchkeyError('configuration_invalid', `The PostgreSQL schema '${schema}' must be a lower-case identifier.`);
  }
  const pool = new pg.Pool({
    connectionString: location.connectionString,
    // Bounds both the TCP connect and the start-up handshake, so a server that accepts the
    // connection but never answers fails start-up after this long instead of hanging it.
    connectionTimeoutMillis: connectTimeoutMs,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  });
  // An idle connection that the server drops emits 'error' on the pool; unhandled, that event
  // would crash the process. The next query gets a fresh connection or reports the failure itself.
  pool.on('error', () => undefined);
  // A connection in use (checked out for a request or a transaction) that the server drops emits
  // 'error' on the client itself, where the pool listens only while it is idle: unhandled, a
  // PostgreSQL restart would crash every process with a request in flight. The query under way
  // fails on its own (the request answers 503), and the pool discards the dead connection when
  // it is released.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  try {
    await pool.query('select 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    const cause = describeConnectionFailure(error, connectTimeoutMs).replaceAll(location.connectionString, maskUrlCredentials(location.connectionString));
    throw new LatchkeyError(
      'database_unavailable',
      `Cannot reach the PostgreSQL database at ${location.address} (DATABASE_URL='${maskUrlCredentials(location.connectionString)}'): ${cause}.`,
      { cause: error },
    );
  }
  return { kysely: new Kysely<DatabaseSchema>({ dialect: new LatchkeyPostgresDialect({ pool }) }), credentialReads: postgresCredentialReads(pool, shape) };
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const location = parseDatabaseUrl(options.url);
  const { usernameType } = options;
  const userFields = options.userFields ?? NO_USER_FIELDS;
  // Before anything is opened: every command and the server open the database first.
  checkUserFields(userFields);
  const shape: UserShape = { usernameType, userFields: userFields.fields };
  const { kysely, credentialReads } = location.dialect === 'sqlite' ? openSqlite(location.filename, shape) : await openPostgres(location, options, shape);
  const dialect = location.dialect;
  const where = location.dialect === 'sqlite' ? location.filename : location.address;

  let closed = false;
  const close = async (): Promise<void> => {
    if (!closed) {
      closed = true;
      await kysely.destroy();
    }
  };

  try {
    await assertUsernameTypeMatches(kysely, usernameType, where);
  } catch (error) {
    await close();
    if (error instanceof LatchkeyError) throw error;
    throw new LatchkeyError('database_unavailable', `Cannot use the database at ${where}: ${(error as Error).message}.`, { cause: error });
  }

  /** Latchkey's migrator, then the project's when it has migrations. */
  const migratorsOf = async (project: ProjectMigrations) => {
    const latchkey = await createMigrator(kysely, dialect, usernameType);
    if (Object.keys(project).length === 0) return [latchkey];
    // The project's migrations see the database as the project types it, not as Latchkey's schema.
    return [latchkey, createProjectMigrator(kysely as unknown as Kysely<object>, dialect, project, await migrationSchemaOf(kysely, dialect))];
  };

  return {
    dialect,
    usernameType,
    userFields,
    kysely,
    store: createKyselyStore(kysely, dialect, shape, credentialReads),
    async migrate(project: ProjectMigrations = {}): Promise<string[]> {
      await assertUsernameTypeMatches(kysely, usernameType, where);
      refuseMalformedProjectMigrations(project);
      // Latchkey's first: the project's tables may refer to users_user and the others.
      const applied: string[] = [];
      for (const migrator of await migratorsOf(project)) {
        const { error, results = [] } = await migrator.migrateToLatest();
        applied.push(...results.filter((result) => result.status === 'Success').map((result) => result.migrationName));
        if (error !== undefined) {
          // Kysely has rolled the failed migration back; report it as one line, not a stack trace.
          const failed = results.find((result) => result.status === 'Error')?.migrationName ?? 'a migration';
          const reason = error instanceof Error ? error.message : 'unknown error';
          throw new LatchkeyError('database_unavailable', `Migration ${failed} failed on ${where}: ${reason}`, { cause: error });
        }
      }
      return applied;
    },
    async pendingMigrations(project: ProjectMigrations = {}): Promise<string[]> {
      refuseMalformedProjectMigrations(project);
      const pending: string[] = [];
      for (const migrator of await migratorsOf(project)) {
        const migrations = await migrator.getMigrations();
        pending.push(...migrations.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name));
      }
      return pending;
    },
    async missingUserFieldColumns(): Promise<string[]> {
      if (userFields.fields.length === 0) return [];
      // This schema's table only: PostgreSQL's introspection would list every schema's.
      const query =
        dialect === 'postgres'
          ? sql<{ name: string }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = 'latchkey_users'`
          : sql<{ name: string }>`select name from pragma_table_info('latchkey_users')`;
      const columns = new Set((await query.execute(kysely)).rows.map((row) => row.name));
      return userFields.fields.map((field) => field.name).filter((name) => !columns.has(name));
    },
    close,
  };
}
