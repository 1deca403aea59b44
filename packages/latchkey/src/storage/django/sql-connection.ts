/**
 * A read-only connection to a Django project's database, SQLite or PostgreSQL, with the little the
 * database source needs: a table's columns, and statements written once with $1, $2 placeholders.
 * The source is someone's production database: nothing here can write to it. SQLite is opened
 * read-only; PostgreSQL reads in one READ ONLY, REPEATABLE READ transaction, which also gives every
 * kind the same snapshot, so rows added while an import runs cannot leave a token without its user.
 */
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { LatchkeyError } from '../../core/errors.js';
import { maskUrlCredentials } from '../../core/redact.js';
import { parseDatabaseUrl, type DatabaseLocation } from '../../config/database-url.js';
import type { DjangoRecord } from './values.js';

export interface DjangoSqlConnection {
  /** What was opened, for messages: never the password. */
  readonly description: string;
  /** The table's columns, each with its declared type in lower case (`bool`, `varchar(100)`), or undefined when the database has no such table. */
  columns(table: string): Promise<ReadonlyMap<string, string> | undefined>;
  /** Runs a statement whose parameters are written $1, $2, ... */
  query(statement: string, values?: readonly unknown[]): Promise<DjangoRecord[]>;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 5000;

function locate(url: string): DatabaseLocation {
  let location: DatabaseLocation | undefined;
  try {
    location = parseDatabaseUrl(url);
  } catch {
    // parseDatabaseUrl speaks of DATABASE_URL; this is the Django project's database.
  }
  if (location === undefined || (location.dialect === 'sqlite' && location.filename === ':memory:')) {
    throw new LatchkeyError(
      'invalid_input',
      `'${maskUrlCredentials(url)}' is not a Django database to import from: use sqlite:PATH or postgres://user:password@host:port/database (or a dumpdata JSON file).`,
    );
  }
  return location;
}

function openSqlite(filename: string): DjangoSqlConnection {
  const description = `SQLite database ${filename}`;
  let database: BetterSqlite3.Database;
  try {
    database = new BetterSqlite3(filename, { readonly: true, fileMustExist: true });
    // Opening is lazy: the first read is what finds out that a file is not a database.
    database.prepare('select count(*) from sqlite_master').get();
  } catch (error) {
    throw new LatchkeyError('invalid_input', `Cannot read the ${description}: ${(error as Error).message}.`, { cause: error });
  }
  // The statements are written with PostgreSQL's $1, $2; better-sqlite3 binds anonymous ? in order.
  const run = (statement: string, values: readonly unknown[]) => {
    const order = [...statement.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]) - 1);
    return database.prepare(statement.replace(/\$\d+/g, '?')).all(...order.map((index) => values[index])) as DjangoRecord[];
  };
  let closed = false;
  return {
    description,
    columns(table) {
      const rows = database.prepare('select name, type from pragma_table_info(?)').all(table) as { name: string; type: string }[];
      return Promise.resolve(rows.length === 0 ? undefined : new Map(rows.map((row) => [row.name, row.type.toLowerCase()])));
    },
    query(statement, values = []) {
      return Promise.resolve(run(statement, values));
    },
    close() {
      if (!closed) database.close();
      closed = true;
      return Promise.resolve();
    },
  };
}

/**
 * pg turns timestamps into Dates in the Node process's time zone, which is wrong for a column
 * without time zone (a project with USE_TZ=False); read both as text and parse them as every
 * source does (values.ts). A day (a DateField, which a project's user field may come from) stays
 * its ISO text too, as SQLite and dumpdata give it: pg would make it local midnight. A bigint
 * (BigAutoField ids, a BigIntegerField) is a number when it is a safe integer, as an integer is.
 */
const TEXT_TYPES = new Set<number>([pg.types.builtins.TIMESTAMP, pg.types.builtins.TIMESTAMPTZ, pg.types.builtins.DATE]);
const BIGINT: number = pg.types.builtins.INT8;
function getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (TEXT_TYPES.has(oid)) return (value: string) => value;
  if (oid === BIGINT) {
    return (value: string) => {
      const number = Number(value);
      return Number.isSafeInteger(number) ? number : value;
    };
  }
  return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
}

async function openPostgres(connectionString: string, address: string): Promise<DjangoSqlConnection> {
  const name = decodeURIComponent(new URL(connectionString).pathname.slice(1)) || '(the default)';
  const description = `PostgreSQL database ${name} at ${address}`;
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, types: { getTypeParser: getTypeParser as typeof pg.types.getTypeParser } });
  // A connection that drops later fails the statement under way; without a listener it would also crash the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    // Timestamps as text in the one form values.ts reads, whatever the server's defaults.
    await client.query(`set datestyle to 'ISO'; set time zone 'UTC'`);
    await client.query('begin transaction isolation level repeatable read, read only');
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new LatchkeyError('database_unavailable', `Cannot read the ${description}: ${(error as Error).message}.`, { cause: error });
  }
  // One statement at a time: a caller may read two kinds at once, and pg's own queueing is deprecated.
  let previous: Promise<unknown> = Promise.resolve();
  const run = (statement: string, values: readonly unknown[] = []): Promise<DjangoRecord[]> => {
    const result = previous.then(async () => (await client.query(statement, [...values])).rows as DjangoRecord[]);
    previous = result.catch(() => undefined);
    return result;
  };
  let closed = false;
  return {
    description,
    async columns(table) {
      // to_regclass follows the search path, as Django's own queries do; null when there is no such table.
      const rows = await run(
        'select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute where attrelid = to_regclass($1::text) and attnum > 0 and not attisdropped order by attnum',
        [table],
      );
      return rows.length === 0 ? undefined : new Map(rows.map((row) => [row.name as string, row.type as string]));
    },
    query: run,
    async close() {
      if (closed) return;
      closed = true;
      await run('rollback').catch(() => undefined);
      await client.end();
    },
  };
}

/** Opens `sqlite:PATH` or `postgres://...` read-only. */
export async function openDjangoSqlConnection(url: string): Promise<DjangoSqlConnection> {
  const location = locate(url);
  return location.dialect === 'sqlite' ? openSqlite(location.filename) : openPostgres(location.connectionString, location.address);
}
