/**
 * PostgreSQL for the journeys: a database of its own for each site, on the server the storage
 * suites use (TEST_DATABASE_URL), dropped when the site stops.
 *
 * A database rather than a schema (what packages/latchkey/src/testing/database.ts gives a test in
 * the same process): the site is another process that takes only DATABASE_URL, and migrates what
 * it finds there at start-up (`npm run dev` is local mode), so a fresh database is what a new
 * project's operator gives it. Its name is random, lower-case and alphanumeric, so it is safe to
 * splice into DDL, and no two sites of a run (or of two runs on one server) ever meet.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { testPostgresUrl } from '../../packages/latchkey/src/testing/database.js';

export type SiteDatabase = 'sqlite' | 'postgres';

/**
 * The databases a journey can run its site on here: SQLite always, PostgreSQL when TEST_DATABASE_URL
 * names a server. For `describe.each(siteDatabases())('... on %s', (database) => ...)`: the name
 * is in the test's title, and so in its artifacts' folder.
 */
export function siteDatabases(): SiteDatabase[] {
  return testPostgresUrl() === undefined ? ['sqlite'] : ['sqlite', 'postgres'];
}

/**
 * The one database for journeys that run once: PostgreSQL when there is one (what a deployed site
 * runs on), else SQLite.
 */
export function deployedDatabase(): SiteDatabase {
  return testPostgresUrl() === undefined ? 'sqlite' : 'postgres';
}

export interface SitePostgresDatabase {
  /** The site's DATABASE_URL: the server's URL with this database's name as its path. */
  url: string;
  /** Drops the database, ending any connection still open to it. Safe to call twice. */
  drop(): Promise<void>;
}

async function onServer(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function createSitePostgresDatabase(): Promise<SitePostgresDatabase> {
  const serverUrl = testPostgresUrl();
  if (serverUrl === undefined) {
    throw new Error('A site on PostgreSQL needs TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/postgres (check siteDatabases() first).');
  }
  const name = `lk_e2e_${randomBytes(6).toString('hex')}`;
  const url = new URL(serverUrl);
  try {
    await onServer(serverUrl, `create database ${name}`);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const why = `${reason} (a site on PostgreSQL gets a database of its own: TEST_DATABASE_URL's user needs the right to create databases)`;
    throw new Error(`Cannot create a database for the site on TEST_DATABASE_URL's server at ${url.host}: ${why}.`, { cause: error });
  }
  url.pathname = `/${name}`;
  let dropping: Promise<void> | undefined;
  // WITH (FORCE): a site killed mid-request may leave a connection behind; it must not keep the database.
  const drop = () => (dropping ??= onServer(serverUrl, `drop database if exists ${name} with (force)`));
  return { url: url.toString(), drop };
}
