/**
 * openDjangoDatabase against databases made by real Django (testing/django-fixture.ts): SQLite
 * always, PostgreSQL when TEST_DATABASE_URL is set, for both username types. Each describe builds
 * its fixture once; its last tests change that database (allauth 65's socialapp columns, tables
 * dropped), so they run after the ones that read it as Django left it.
 */
import BetterSqlite3 from 'better-sqlite3';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsernameType } from '../../config/settings.js';
import { DJANGO_KINDS, type DjangoKind, type DjangoPermission, type DjangoRows } from '../../django-import/model.js';
import type { DjangoSource } from '../../django-import/ports.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { djangoFixtureUnavailable, createDjangoFixture, expectedDjangoRows, type DjangoFixture } from '../../testing/django-fixture.js';
import { openDjangoDatabase } from './database-source.js';

async function readAll<K extends DjangoKind>(source: DjangoSource, kind: K, batchSize: number): Promise<{ rows: DjangoRows[K][]; batchSizes: number[] }> {
  const rows: DjangoRows[K][] = [];
  const batchSizes: number[] = [];
  for await (const batch of source.rows(kind, batchSize)) {
    batchSizes.push(batch.length);
    rows.push(...batch);
  }
  return { rows, batchSizes };
}

/** Permissions in one order, whichever order a source gives them in. */
const byGrant = (permissions: DjangoPermission[]) =>
  [...permissions].sort((a, b) => a.userId - b.userId || (a.group ?? '').localeCompare(b.group ?? '') || a.appLabel.localeCompare(b.appLabel) || a.codename.localeCompare(b.codename));

/** Runs statements on the fixture's database as its owner (the source itself never writes). */
async function changeDatabase(databaseUrl: string, statements: string[]): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const database = new BetterSqlite3(databaseUrl.slice('sqlite:'.length));
    for (const statement of statements) database.exec(statement);
    database.close();
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // A source left open would otherwise make a change wait for ever instead of failing.
    await client.query(`set lock_timeout = '5s'`);
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

const cases = testDatabaseKinds().flatMap((database) => (['username', 'email'] satisfies UsernameType[]).map((usernameType) => ({ database, usernameType })));

describe.skipIf(djangoFixtureUnavailable() !== null).each(cases)('openDjangoDatabase on $database, usernameType $usernameType', ({ database, usernameType }) => {
  let fixture: DjangoFixture;
  let source: DjangoSource;

  beforeAll(async () => {
    fixture = await createDjangoFixture({ usernameType, database });
    source = await openDjangoDatabase(fixture.databaseUrl);
  }, 60_000);

  afterAll(async () => {
    await source?.close();
    await fixture?.cleanup();
  });

  it('reads every kind as Django stored it: ids, values, booleans and instants', async () => {
    const expected = expectedDjangoRows(fixture.manifest);
    expect(await source.loginField()).toBe(usernameType);
    for (const kind of DJANGO_KINDS) {
      const { rows } = await readAll(source, kind, 1000);
      if (kind === 'permissions') expect(byGrant(rows as DjangoPermission[])).toEqual(byGrant(expected.permissions));
      else expect(rows, kind).toEqual(expected[kind]);
    }
    const { rows: users } = await readAll(source, 'users', 1000);
    expect(users.every((user) => typeof user.isActive === 'boolean' && user.dateJoined instanceof Date)).toBe(true);
    expect(users.find((user) => user.id === fixture.manifest.users[0]!.id)!.dateJoined.toISOString()).toBe('2021-03-04T05:06:07.123Z');
    expect(users.map((user) => user.username)).toEqual(fixture.manifest.users.map((user) => (usernameType === 'username' ? user.login : null)));
  });

  it("reads the columns the project's user fields come from as dumpdata writes them, and names users_user's other columns", async () => {
    expect(await source.userColumns()).toEqual({ project: [], absent: [], unread: ['birth_date', 'company', 'newsletter', 'phone_extension'] });
    const projectColumns = ['company', 'birth_date', 'phone_extension', 'newsletter', 'nickname', 'name'];
    const withColumns = await openDjangoDatabase(fixture.databaseUrl, { projectColumns });
    try {
      expect(await withColumns.userColumns()).toEqual({ project: ['company', 'birth_date', 'phone_extension', 'newsletter', 'name'], absent: ['nickname'], unread: [] });
      const { rows } = await readAll(withColumns, 'users', 4);
      expect(rows).toEqual(expectedDjangoRows(fixture.manifest, projectColumns).users.map((user) => ({ ...user, projectColumns: { ...user.projectColumns, name: user.name } })));
      // A day as its ISO text (not pg's local midnight), SQLite's 0 and 1 as booleans, an integer as a number.
      expect(rows[0]!.projectColumns).toEqual({ company: 'Wonderland Ltd', birth_date: '1990-04-01', phone_extension: 4021, newsletter: true, name: 'Alice Liddell' });
      expect(rows[1]!.projectColumns).toMatchObject({ birth_date: null, phone_extension: null, newsletter: false });
    } finally {
      await withColumns.close();
    }
  });

  it('parses the JSON columns: mfa data (JSON on PostgreSQL, text on SQLite) and allauth 0.51 extra_data (text)', async () => {
    const { rows: authenticators } = await readAll(source, 'authenticators', 10);
    const recoveryCodes = authenticators.find((row) => row.type === 'recovery_codes' && !('migrated_codes' in row.data))!;
    expect(recoveryCodes.data).toEqual({ seed: expect.stringMatching(/^[0-9a-f]{80}$/), used_mask: 0b1000000101 });
    const { rows: accounts } = await readAll(source, 'socialAccounts', 10);
    expect(accounts.find((account) => account.provider === 'github')).toMatchObject({ uid: '12345', extraData: { id: 12345, login: 'alice' } });
  });

  it('counts each kind and hands its rows out in batches of at most batchSize, in key order', async () => {
    for (const kind of DJANGO_KINDS) {
      const all = (await readAll(source, kind, 1000)).rows;
      expect(await source.count(kind), kind).toBe(all.length);
      const { rows, batchSizes } = await readAll(source, kind, 2);
      expect(rows, kind).toEqual(all);
      expect(batchSizes.every((size) => size >= 1 && size <= 2), kind).toBe(true);
      expect(batchSizes.length, kind).toBe(Math.ceil(all.length / 2));
    }
    const { rows: tokens } = await readAll(source, 'tokens', 1);
    expect(tokens.map((token) => token.key)).toEqual(fixture.manifest.tokens.map((token) => token.key).sort());
    expect(() => source.rows('users', 0)).toThrow(RangeError);
  });

  if (database === 'postgres') {
    it('never shows the password of the URL it was given', async () => {
      const url = new URL(fixture.databaseUrl);
      url.password = 'not-to-be-shown';
      const withPassword = await openDjangoDatabase(url.toString());
      try {
        expect(withPassword.description).toBe(`PostgreSQL database ${url.pathname.slice(1)} at ${url.hostname}:${url.port || '5432'}`);
      } finally {
        await withPassword.close();
      }
    });
  } else {
    it('describes the file it read', () => {
      expect(source.description).toBe(`SQLite database ${fixture.databaseUrl.slice('sqlite:'.length)}`);
    });
  }

  it("reads allauth 65's socialapp columns (provider_id, settings) when the table has them", async () => {
    // The shared source's snapshot holds locks (PostgreSQL) that ALTER TABLE would wait for.
    await source.close();
    const json = database === 'postgres' ? 'jsonb' : 'text';
    await changeDatabase(fixture.databaseUrl, [
      `alter table socialaccount_socialapp add column provider_id varchar(200) not null default ''`,
      `alter table socialaccount_socialapp add column settings ${json} not null default '{}'`,
      `update socialaccount_socialapp set provider = 'openid_connect', provider_id = 'corp', settings = '{"server_url": "https://sso.example.com"}' where provider = 'corp'`,
    ]);
    const reopened = await openDjangoDatabase(fixture.databaseUrl);
    try {
      const { rows: apps } = await readAll(reopened, 'socialApps', 10);
      expect(apps.find((app) => app.providerId === 'corp')).toMatchObject({ provider: 'openid_connect', clientId: 'corp-client-id', settings: { server_url: 'https://sso.example.com' } });
      expect(apps.find((app) => app.provider === 'github')).toMatchObject({ providerId: '', settings: {} });
    } finally {
      await reopened.close();
    }
  });

  it('has no tokens, authenticators or permissions when their tables are absent', async () => {
    await changeDatabase(fixture.databaseUrl, ['drop table authtoken_token', 'drop table mfa_authenticator', 'drop table users_user_user_permissions']);
    const reopened = await openDjangoDatabase(fixture.databaseUrl);
    try {
      for (const kind of ['tokens', 'authenticators'] as const) {
        expect(await reopened.has(kind)).toBe(false);
        expect(await reopened.count(kind)).toBe(0);
        expect((await readAll(reopened, kind, 10)).rows).toEqual([]);
      }
      // Group grants remain.
      expect(await reopened.has('permissions')).toBe(true);
      expect((await readAll(reopened, 'permissions', 10)).rows.every((permission) => permission.group === 'Support')).toBe(true);
      expect(await reopened.has('users')).toBe(true);
    } finally {
      await reopened.close();
    }
  });

});

describe('openDjangoDatabase refuses', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'latchkey-django-source-'));
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  it('a URL that is not a database it reads', async () => {
    await expect(openDjangoDatabase('mysql://root:hunter2@db/app')).rejects.toThrow(/'mysql:\/\/root:\*\*\*@db\/app' is not a Django database to import from: use sqlite:PATH or postgres:/);
    await expect(openDjangoDatabase('sqlite::memory:')).rejects.toThrow(/is not a Django database to import from/);
  });

  it('a PostgreSQL server that does not answer, without showing the password', async () => {
    const refusal = openDjangoDatabase('postgres://django:hunter2@127.0.0.1:1/app');
    await expect(refusal).rejects.toThrow(/^Cannot read the PostgreSQL database app at 127\.0\.0\.1:1: /);
    await expect(refusal).rejects.not.toThrow(/hunter2/);
  });

  it('a SQLite file that does not exist, or is not a database', async () => {
    await expect(openDjangoDatabase(`sqlite:${join(directory, 'missing.sqlite3')}`)).rejects.toThrow(/Cannot read the SQLite database .*missing\.sqlite3/);
    const notADatabase = join(directory, 'notes.txt');
    await writeFile(notADatabase, 'these are not the tables you are looking for\n'.repeat(100));
    await expect(openDjangoDatabase(`sqlite:${notADatabase}`)).rejects.toThrow(/Cannot read the SQLite database .*notes\.txt: file is not a database/);
  });

  it("a project with Django's default user model instead of cookiecutter's users.User", async () => {
    const path = join(directory, 'default-user.sqlite3');
    const database = new BetterSqlite3(path);
    database.exec('create table auth_user (id integer primary key, username text, password text)');
    database.close();
    await expect(openDjangoDatabase(`sqlite:${path}`)).rejects.toThrow(/has no users_user table.*default auth_user/);
  });
});
