/**
 * The Django project's database the benchmark imports from. Its schema is made by Django itself
 * (createDjangoFixture: Debian's Django 3.2, allauth 0.51 and DRF migrate a new SQLite file or
 * PostgreSQL database), the fixture's own few rows are deleted, and the rows (django-rows.ts) are
 * then inserted directly, which takes seconds where Django's ORM would take an hour. SQLite:
 * better-sqlite3's prepared inserts in one transaction; PostgreSQL: INSERT ... SELECT
 * generate_series for users and addresses, INSERT ... SELECT unnest for tokens and authenticators,
 * then VACUUM ANALYZE, as autovacuum would have left a live database. None of this is measured.
 * Also Django's own `manage.py dumpdata` of such a database, for the dumpdata part.
 */
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { parseDatabaseUrl } from '../../packages/latchkey/src/config/database-url.js';
import { createDjangoFixture, type DjangoFixture } from '../../packages/latchkey/src/testing/django-fixture.js';
import {
  authenticatorsOf,
  djangoPasswordHash,
  FIRST_JOINED,
  FIRST_LOGIN,
  MFA_EVERY,
  TOKEN_EVERY,
  tokenKey,
} from './django-rows.js';
import { DEFAULT_POSTGRES_URL } from '../harness.js';
import { FAMILY_NAMES, FIRST_NAMES, nameOf, sqlArray } from '../names.js';
import { secondsSince } from './figures.js';

const PYTHON = '/usr/bin/python3';
const DJANGO_PROJECT = fileURLToPath(new URL('../../packages/latchkey/test/fixtures/django-project/', import.meta.url));
/** What docs/migrating-from-django.md has operators dump (the fixture project's DUMPDATA_LABELS), with --natural-foreign. */
export const DUMPDATA_LABELS = ['users.User', 'account.EmailAddress', 'socialaccount', 'authtoken', 'mfa', 'auth.Group'];
/** The fixture's own rows are deleted from these, children first, before the benchmark's are inserted. */
const DJANGO_TABLES_CLEARED = [
  'users_user_groups', 'users_user_user_permissions', 'auth_group_permissions', 'auth_group', 'socialaccount_socialtoken', 'socialaccount_socialaccount',
  'socialaccount_socialapp_sites', 'socialaccount_socialapp', 'authtoken_token', 'mfa_authenticator', 'account_emailconfirmation', 'account_emailaddress',
  'django_admin_log', 'users_user',
];

/** A datetime as Django writes it to SQLite with USE_TZ: UTC, a space, microseconds, no offset. */
const sqliteInstant = (milliseconds: number): string => `${new Date(milliseconds).toISOString().slice(0, 23).replace('T', ' ')}000`;

function fillSqliteDjango(file: string, users: number, hash: string, steps: Array<[string, number]>): void {
  const database = new BetterSqlite3(file);
  try {
    // This connection only: a crash mid-load loses a database the benchmark would delete anyway.
    database.pragma('synchronous = OFF');
    let started = performance.now();
    database.transaction(() => {
      for (const table of DJANGO_TABLES_CLEARED) database.prepare(`delete from "${table}"`).run();
    })();
    const insertUser = database.prepare(
      'insert into users_user (id, password, last_login, is_superuser, username, email, is_staff, is_active, date_joined, name) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const insertAddress = database.prepare('insert into account_emailaddress (id, verified, "primary", user_id, email) values (?, ?, 1, ?, ?)');
    database.transaction(() => {
      for (let n = 1; n <= users; n++) {
        const lastLogin = n % 3 === 0 ? null : sqliteInstant(FIRST_LOGIN + n * 7_000);
        insertUser.run(n, hash, lastLogin, n === 1 ? 1 : 0, `user${n}`, `user${n}@example.com`, n === 1 || n % 10_000 === 0 ? 1 : 0, n % 50 === 0 ? 0 : 1, sqliteInstant(FIRST_JOINED + n * 60_000), nameOf(n));
      }
    })();
    steps.push(['users', secondsSince(started)]);
    started = performance.now();
    database.transaction(() => {
      for (let n = 1; n <= users; n++) insertAddress.run(n, n % 20 === 0 ? 0 : 1, n, `user${n}@example.com`);
    })();
    steps.push(['email addresses', secondsSince(started)]);
    started = performance.now();
    const insertToken = database.prepare('insert into authtoken_token (key, created, user_id) values (?, ?, ?)');
    const insertAuthenticator = database.prepare('insert into mfa_authenticator (id, type, data, created_at, last_used_at, user_id) values (?, ?, ?, ?, ?, ?)');
    database.transaction(() => {
      for (let n = TOKEN_EVERY; n <= users; n += TOKEN_EVERY) insertToken.run(tokenKey(), sqliteInstant(FIRST_JOINED + n * 60_000 + 3_600_000), n);
      for (let k = 1; k * MFA_EVERY <= users; k++) {
        for (const row of authenticatorsOf(k)) {
          insertAuthenticator.run(row.id, row.type, row.data, sqliteInstant(row.createdAt), row.lastUsedAt === null ? null : sqliteInstant(row.lastUsedAt), row.userId);
        }
      }
    })();
    steps.push(['tokens and MFA', secondsSince(started)]);
  } finally {
    database.close();
  }
}


const POSTGRES_INSERT_USERS = `
  insert into users_user (id, password, last_login, is_superuser, username, email, is_staff, is_active, date_joined, name)
  select n, $2, case when n % 3 = 0 then null else timestamptz '2024-01-01 00:00:00+00' + n * interval '7 seconds' end,
         n = 1, 'user' || n, 'user' || n || '@example.com', n = 1 or n % 10000 = 0, n % 50 <> 0,
         timestamptz '2018-01-01 00:00:00+00' + n * interval '1 minute',
         (${sqlArray(FIRST_NAMES)})[n % 20 + 1] || ' ' || (${sqlArray(FAMILY_NAMES)})[n / 20 % 50 + 1]
  from generate_series(1, $1::int) as n`;

const POSTGRES_INSERT_ADDRESSES = `
  insert into account_emailaddress (id, verified, "primary", user_id, email)
  select n, n % 20 <> 0, true, n, 'user' || n || '@example.com'
  from generate_series(1, $1::int) as n`;

const POSTGRES_INSERT_TOKENS = `
  insert into authtoken_token (key, created, user_id)
  select key, timestamptz '2018-01-01 01:00:00+00' + user_id * interval '1 minute', user_id
  from unnest($1::text[], $2::bigint[]) as token(key, user_id)`;

const POSTGRES_INSERT_AUTHENTICATORS = `
  insert into mfa_authenticator (id, type, data, created_at, last_used_at, user_id)
  select id, type, data::jsonb, to_timestamp(created_ms / 1000.0), to_timestamp(last_used_ms / 1000.0), user_id
  from unnest($1::bigint[], $2::text[], $3::text[], $4::float8[], $5::float8[], $6::bigint[]) as row(id, type, data, created_ms, last_used_ms, user_id)`;

const POSTGRES_ROWS_PER_STATEMENT = 50_000;

async function fillPostgresDjango(url: string, users: number, hash: string, steps: Array<[string, number]>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let started = performance.now();
    await client.query(`truncate ${DJANGO_TABLES_CLEARED.join(', ')} cascade`);
    await client.query(POSTGRES_INSERT_USERS, [users, hash]);
    steps.push(['users', secondsSince(started)]);
    started = performance.now();
    await client.query(POSTGRES_INSERT_ADDRESSES, [users]);
    steps.push(['email addresses', secondsSince(started)]);
    started = performance.now();
    const holders = Array.from({ length: Math.floor(users / TOKEN_EVERY) }, (_, index) => (index + 1) * TOKEN_EVERY);
    for (let first = 0; first < holders.length; first += POSTGRES_ROWS_PER_STATEMENT) {
      const batch = holders.slice(first, first + POSTGRES_ROWS_PER_STATEMENT);
      await client.query(POSTGRES_INSERT_TOKENS, [batch.map(tokenKey), batch]);
    }
    const authenticators = Array.from({ length: Math.floor(users / MFA_EVERY) }, (_, index) => authenticatorsOf(index + 1)).flat();
    for (let first = 0; first < authenticators.length; first += POSTGRES_ROWS_PER_STATEMENT) {
      const batch = authenticators.slice(first, first + POSTGRES_ROWS_PER_STATEMENT);
      await client.query(POSTGRES_INSERT_AUTHENTICATORS, [
        batch.map((row) => row.id),
        batch.map((row) => row.type),
        batch.map((row) => row.data),
        batch.map((row) => row.createdAt),
        batch.map((row) => row.lastUsedAt),
        batch.map((row) => row.userId),
      ]);
    }
    steps.push(['tokens and MFA', secondsSince(started)]);
    started = performance.now();
    await client.query(`vacuum analyze users_user, account_emailaddress, authtoken_token, mfa_authenticator`);
    steps.push(['VACUUM ANALYZE', secondsSince(started)]);
  } finally {
    await client.end();
  }
}

export interface DjangoDatabase {
  fixture: DjangoFixture;
  /** Each step's name and seconds. */
  steps: Array<[string, number]>;
  sizeBytes: number;
}

async function sqliteSize(file: string): Promise<number> {
  const sizes = await Promise.all([file, `${file}-wal`].map((path) => stat(path).then((found) => found.size, () => 0)));
  return sizes.reduce((total, size) => total + size, 0);
}

async function postgresSize(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: string }>('select pg_database_size(current_database()) as bytes');
    return Number(rows[0]!.bytes);
  } finally {
    await client.end();
  }
}

/** A Django project's database, its schema made by Django, holding `users` users and their rows. */
export async function makeDjangoDatabase(kind: 'sqlite' | 'postgres', users: number): Promise<DjangoDatabase> {
  const steps: Array<[string, number]> = [];
  let started = performance.now();
  const hash = djangoPasswordHash();
  // createDjangoFixture finds PostgreSQL through TEST_DATABASE_URL, as the harness does.
  if (kind === 'postgres' && !process.env.TEST_DATABASE_URL) process.env.TEST_DATABASE_URL = DEFAULT_POSTGRES_URL;
  const fixture = await createDjangoFixture({ usernameType: 'username', database: kind });
  steps.push(["Django's migrations", secondsSince(started)]);
  try {
    started = performance.now();
    if (kind === 'sqlite') fillSqliteDjango(sqliteFile(fixture.databaseUrl), users, hash, steps);
    else await fillPostgresDjango(fixture.databaseUrl, users, hash, steps);
    const sizeBytes = kind === 'sqlite' ? await sqliteSize(sqliteFile(fixture.databaseUrl)) : await postgresSize(fixture.databaseUrl);
    return { fixture, steps, sizeBytes };
  } catch (error) {
    await fixture.cleanup();
    throw error;
  }
}

const sqliteFile = (url: string): string => (parseDatabaseUrl(url) as { filename: string }).filename;

/** `manage.py dumpdata` of the account apps, --natural-foreign, as docs/migrating-from-django.md has operators run it. */
export async function dumpdata(databaseUrl: string, output: string): Promise<void> {
  const args = ['manage.py', 'dumpdata', ...DUMPDATA_LABELS, '--natural-foreign', '--indent', '2', '--output', output];
  const env = { ...process.env, DJANGO_SETTINGS_MODULE: 'config.settings', DJANGO_USERNAME_TYPE: 'username', DJANGO_DATABASE_URL: databaseUrl, PYTHONDONTWRITEBYTECODE: '1' };
  await promisify(execFile)(PYTHON, args, { cwd: DJANGO_PROJECT, env, maxBuffer: 16 << 20 });
}
