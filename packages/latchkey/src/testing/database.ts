/**
 * Fresh, migrated databases for tests. Every call gets its own: an in-memory SQLite database, or a
 * schema `lk_test_<random>` in TEST_DATABASE_URL's PostgreSQL database, so that test files
 * running in parallel never see each other's rows. `destroy()` closes it and removes the SQLite
 * file, or hands the emptied schema back to the pool (postgres-schema-pool.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase, type Database, type OpenDatabaseOptions } from '../storage/database.js';
import type { UsernameType } from '../config/settings.js';
import type { UserFieldSet } from '../core/user-fields.js';
import { claimPooledSchema, returnSchemaToPool } from './postgres-schema-pool.js';

export type TestDatabaseKind = 'sqlite' | 'postgres';

export interface TestDatabase extends Database {
  /**
   * What opens this same database again: a second instance in multi-instance tests, or a reopen
   * after a simulated crash. With an in-memory SQLite database a second open sees an empty one;
   * pass `{ sqliteFile: true }` to createTestDatabase when a test needs to reopen.
   */
  readonly openOptions: OpenDatabaseOptions;
  /** Closes the database and removes everything it created. */
  destroy(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** SQLite only: use a file in a new temporary directory instead of memory. */
  sqliteFile?: boolean;
  /** false: leave the database empty, for tests of migrating itself. Default true. */
  migrate?: boolean;
  /** The project's user fields (createLatchkey's userFields): their columns come from the project's migrations. */
  userFields?: UserFieldSet;
}

/** The PostgreSQL server tests use, or undefined when the PostgreSQL part is left out. */
export function testPostgresUrl(): string | undefined {
  const url = process.env.TEST_DATABASE_URL;
  return url === undefined || url === '' ? undefined : url;
}

/** The databases to run storage-backed suites on: SQLite always, PostgreSQL when configured. */
export function testDatabaseKinds(): TestDatabaseKind[] {
  return testPostgresUrl() === undefined ? ['sqlite'] : ['sqlite', 'postgres'];
}

/** One statement on its own connection to the server at `url` (creating or dropping a schema or a database). */
export async function runAdminStatement(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * A fresh, migrated database of the test's own: in-memory SQLite, or a schema of its own in
 * TEST_DATABASE_URL's PostgreSQL. `destroy()` removes it.
 */
export async function createTestDatabase(kind: TestDatabaseKind, usernameType: UsernameType, options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    if (options.sqliteFile !== true) {
      return openMigrated({ url: 'sqlite::memory:', usernameType, ...fieldsOf(options) }, options, () => Promise.resolve());
    }
    const directory = await mkdtemp(join(tmpdir(), 'latchkey-test-'));
    // The directory also holds the -wal and -shm files, so removing it leaves nothing behind.
    return openMigrated({ url: `sqlite:${join(directory, 'db.sqlite3')}`, usernameType, ...fieldsOf(options) }, options, () => rm(directory, { recursive: true, force: true }));
  }

  const url = testPostgresUrl();
  if (url === undefined) {
    throw new Error('createTestDatabase("postgres") needs TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/postgres.');
  }
  const dropSchema = (schema: string) => () => runAdminStatement(url, `drop schema if exists ${schema} cascade`);
  if (options.migrate !== false) {
    const pooled = await claimPooledSchema(url, usernameType);
    if (pooled !== undefined) {
      const database = await openDatabase({ url, usernameType, postgresSchema: pooled, ...fieldsOf(options) });
      return asTestDatabase(database, { url, usernameType, postgresSchema: pooled, ...fieldsOf(options) }, async () => {
        // A schema a test left in a state it cannot be emptied from is dropped instead.
        if (!(await returnSchemaToPool(url, pooled, usernameType))) await dropSchema(pooled)();
      });
    }
  }
  // Random, lower-case and alphanumeric, so it is safe to splice into DDL.
  const schema = `lk_test_${randomBytes(8).toString('hex')}`;
  await runAdminStatement(url, `create schema ${schema}`);
  // A schema migrated here joins the pool when its test is done; one left unmigrated (a test of
  // migrating itself) may hold anything, so it is dropped.
  const release = options.migrate === false ? dropSchema(schema) : async () => {
    if (!(await returnSchemaToPool(url, schema, usernameType))) await dropSchema(schema)();
  };
  return openMigrated({ url, usernameType, postgresSchema: schema, ...fieldsOf(options) }, options, release, dropSchema(schema));
}

function fieldsOf(options: TestDatabaseOptions): { userFields?: UserFieldSet } {
  return options.userFields === undefined ? {} : { userFields: options.userFields };
}

async function openMigrated(
  openOptions: OpenDatabaseOptions,
  options: TestDatabaseOptions,
  release: () => Promise<void>,
  removeOnFailure: () => Promise<void> = release,
): Promise<TestDatabase> {
  let database: Database | undefined;
  try {
    database = await openDatabase(openOptions);
    if (options.migrate !== false) {
      await database.migrate();
    }
  } catch (error) {
    await database?.close();
    await removeOnFailure();
    throw error;
  }
  return asTestDatabase(database, openOptions, release);
}

function asTestDatabase(database: Database, openOptions: OpenDatabaseOptions, release: () => Promise<void>): TestDatabase {
  return Object.assign(database, {
    openOptions,
    async destroy(): Promise<void> {
      await database.close();
      await release();
    },
  });
}
