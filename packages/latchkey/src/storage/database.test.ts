import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LatchkeyError } from '../core/errors.js';
import { testPostgresUrl } from '../testing/database.js';
import { parseDatabaseUrl } from '../config/database-url.js';
import { openDatabase } from './database.js';

async function failureOf(work: Promise<unknown>): Promise<LatchkeyError> {
  const error = await work.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(LatchkeyError);
  return error as LatchkeyError;
}

async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('parseDatabaseUrl', () => {
  it('resolves SQLite paths against the working directory, and keeps absolute ones', () => {
    expect(parseDatabaseUrl('sqlite:./db.sqlite3', '/srv/app')).toEqual({ dialect: 'sqlite', filename: '/srv/app/db.sqlite3' });
    expect(parseDatabaseUrl('sqlite:data/db.sqlite3', '/srv/app')).toEqual({ dialect: 'sqlite', filename: '/srv/app/data/db.sqlite3' });
    expect(parseDatabaseUrl('sqlite:/var/lib/app.db', '/srv/app')).toEqual({ dialect: 'sqlite', filename: '/var/lib/app.db' });
    expect(parseDatabaseUrl('sqlite::memory:')).toEqual({ dialect: 'sqlite', filename: ':memory:' });
  });

  it('accepts postgres:// and postgresql:// and names host:port for messages', () => {
    expect(parseDatabaseUrl('postgres://u:p@db.internal:6543/app')).toEqual({ dialect: 'postgres', connectionString: 'postgres://u:p@db.internal:6543/app', address: 'db.internal:6543' });
    expect(parseDatabaseUrl('postgresql://u@127.0.0.1/app')).toMatchObject({ dialect: 'postgres', address: '127.0.0.1:5432' });
  });

  it.each(['mysql://u:secret@host/db', '', 'sqlite:', 'sqlite://db.sqlite3', 'sqlite:////abs/db.sqlite3', 'db.sqlite3', 'postgres://u:secret@[bad/db', 'mysql://host/db?user=u&password=secret'])(
    'refuses %j in one line naming DATABASE_URL, the allowed forms, and no password',
    (url) => {
      let error: unknown;
      try {
        parseDatabaseUrl(url);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(LatchkeyError);
      const { code, message } = error as LatchkeyError;
      expect(code).toBe('configuration_invalid');
      expect(message).toMatch(/^DATABASE_URL='/);
      expect(message).toContain('sqlite:PATH');
      expect(message).toContain('postgres://user:password@host:port/database');
      expect(message).not.toContain('secret');
      expect(message).not.toContain('\n');
    },
  );
});

describe('openDatabase on SQLite', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'latchkey-open-'));
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('sets WAL, foreign keys, a busy timeout and synchronous FULL', async () => {
    const database = await openDatabase({ url: `sqlite:${join(directory, 'db.sqlite3')}`, usernameType: 'email' });
    try {
      const pragma = async (name: string): Promise<unknown> => Object.values((await sql.raw(`pragma ${name}`).execute(database.kysely)).rows[0] as object)[0];
      expect(database.dialect).toBe('sqlite');
      expect(await pragma('journal_mode')).toBe('wal');
      expect(await pragma('foreign_keys')).toBe(1);
      expect(await pragma('busy_timeout')).toBe(5000);
      expect(await pragma('synchronous')).toBe(2);
    } finally {
      await database.close();
      await database.close();
    }
  });

  it('takes the write lock when a transaction begins (BEGIN IMMEDIATE), so other processes wait for it', async () => {
    const url = `sqlite:${join(directory, 'db.sqlite3')}`;
    const first = await openDatabase({ url, usernameType: 'email' });
    await first.migrate();
    const second = await openDatabase({ url, usernameType: 'email' });
    // Without waiting, the second connection reports a held write lock at once.
    await sql`pragma busy_timeout = 0`.execute(second.kysely);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const transaction = first.store.transaction(async (repositories) => {
      await repositories.users.count();
      await held;
    });
    try {
      // A deferred transaction that has only read holds no write lock, and this write would succeed.
      await expect(second.store.users.create({ email: 'x@example.com', password: 'h', dateJoined: new Date() })).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    } finally {
      release();
      await transaction;
      await second.close();
      await first.close();
    }
  });

  it('reports a missing directory and a file that is not a database as database_unavailable', async () => {
    const missing = await failureOf(openDatabase({ url: `sqlite:${join(directory, 'missing', 'db.sqlite3')}`, usernameType: 'email' }));
    expect(missing.code).toBe('database_unavailable');
    expect(missing.message).toContain(join(directory, 'missing', 'db.sqlite3'));

    const notADatabase = join(directory, 'notes.txt');
    await writeFile(notADatabase, 'this is not a SQLite database, just some text long enough to have a header');
    const garbage = await failureOf(openDatabase({ url: `sqlite:${notADatabase}`, usernameType: 'email' }));
    expect(garbage.code).toBe('database_unavailable');
  });
});

// No assertion here reads the clock: a loaded machine may be slow. The per-test timeout is the
// guard against a hang, and the message tells a refused connection from one that timed out.
const UNREACHABLE_TEST_TIMEOUT_MS = 15_000;

describe('openDatabase on an unreachable PostgreSQL', () => {
  it('fails on a refused port without waiting for the connect timeout, naming host:port and the cause, with the password masked', { timeout: UNREACHABLE_TEST_TIMEOUT_MS }, async () => {
    const probe = createServer();
    const port = await listenOnLoopback(probe);
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    // Longer than the test may take: a failure that waited for it would time the test out.
    const error = await failureOf(openDatabase({ url: `postgres://app:hunter2@127.0.0.1:${port}/app`, usernameType: 'email', connectTimeoutMs: 60_000 }));
    expect(error.code).toBe('database_unavailable');
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(error.message).toContain('connection refused');
    expect(error.message).toContain('app:***@');
    expect(error.message).not.toContain('hunter2');
  });

  it('gives up on a server that accepts the connection but never answers', { timeout: UNREACHABLE_TEST_TIMEOUT_MS }, async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    const port = await listenOnLoopback(silent);
    try {
      const error = await failureOf(openDatabase({ url: `postgres://app:hunter2@127.0.0.1:${port}/app`, usernameType: 'email', connectTimeoutMs: 1000 }));
      expect(error.code).toBe('database_unavailable');
      expect(error.message).toContain(`127.0.0.1:${port}`);
      expect(error.message).toContain('no answer within 1000 ms');
      expect(error.message).not.toContain('hunter2');
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it.skipIf(testPostgresUrl() === undefined)('reports a database that does not exist', async () => {
    const url = new URL(testPostgresUrl()!);
    url.pathname = '/latchkey_no_such_database';
    const error = await failureOf(openDatabase({ url: url.toString(), usernameType: 'email' }));
    expect(error.code).toBe('database_unavailable');
    expect(error.message).toContain('the database does not exist');
  });
});
