/**
 * openDjangoDumpdata against the dumps real Django wrote of the fixture project
 * (testing/django-fixture.ts), for both username types: with --natural-foreign as the docs tell
 * operators to run it, and with integer references. The dumps come from SQLite fixtures only:
 * dumpdata writes the same JSON whichever database it read. Hand-written dumps cover what Debian's
 * allauth 0.51 cannot make (allauth 65's socialapp fields) and what operators get wrong.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsernameType } from '../../config/settings.js';
import { DJANGO_KINDS, type DjangoKind, type DjangoPermission, type DjangoRows } from '../../django-import/model.js';
import type { DjangoSource } from '../../django-import/ports.js';
import { djangoFixtureUnavailable, createDjangoFixture, expectedDjangoRows, type DjangoFixture } from '../../testing/django-fixture.js';
import { openDjangoDumpdata } from './dumpdata-source.js';
import { readJsonArrayObjects } from './json-array-stream.js';

async function readAll<K extends DjangoKind>(source: DjangoSource, kind: K, batchSize = 1000): Promise<DjangoRows[K][]> {
  const rows: DjangoRows[K][] = [];
  for await (const batch of source.rows(kind, batchSize)) {
    expect(batch.length).toBeGreaterThan(0);
    expect(batch.length).toBeLessThanOrEqual(batchSize);
    rows.push(...batch);
  }
  return rows;
}

const byGrant = (permissions: DjangoPermission[]) =>
  [...permissions].sort((a, b) => a.userId - b.userId || (a.group ?? '').localeCompare(b.group ?? '') || a.appLabel.localeCompare(b.appLabel) || a.codename.localeCompare(b.codename));

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'latchkey-dumpdata-'));
});
afterAll(() => rm(directory, { recursive: true, force: true }));

/** Writes a dump (or any text) to a new file and returns its path. */
async function dumpFile(name: string, content: unknown): Promise<string> {
  const path = join(directory, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

describe.skipIf(djangoFixtureUnavailable() !== null).each(['username', 'email'] satisfies UsernameType[])('openDjangoDumpdata of Django dumps, usernameType %s', (usernameType) => {
  let fixture: DjangoFixture;
  beforeAll(async () => {
    fixture = await createDjangoFixture({ usernameType, database: 'sqlite' });
  }, 60_000);
  afterAll(() => fixture?.cleanup());

  it.each([
    ['--natural-foreign', () => fixture.dumpdataPath],
    ['integer references, with auth.Permission and contenttypes', () => fixture.dumpdataWithIdsPath],
  ])('reads every kind of a dump with %s as the manifest says', async (_, path) => {
    const source = await openDjangoDumpdata(path());
    const expected = expectedDjangoRows(fixture.manifest);
    expect(source.description).toBe(`dumpdata file ${path()}`);
    expect(await source.loginField()).toBe(usernameType);
    for (const kind of DJANGO_KINDS) {
      const rows = await readAll(source, kind);
      expect(await source.count(kind), kind).toBe(rows.length);
      expect(await source.has(kind), kind).toBe(true);
      if (kind === 'permissions') expect(byGrant(rows as DjangoPermission[])).toEqual(byGrant(expected.permissions));
      else expect(rows, kind).toEqual(expected[kind]);
    }
    await source.close();
  });

  it('hands rows out in batches of at most batchSize, in primary-key order', async () => {
    const source = await openDjangoDumpdata(fixture.dumpdataPath);
    expect((await readAll(source, 'users', 2)).map((user) => user.id)).toEqual(fixture.manifest.users.map((user) => user.id));
    expect((await readAll(source, 'tokens', 1)).map((token) => token.key)).toEqual(fixture.manifest.tokens.map((token) => token.key).sort());
    expect(() => source.rows('users', 0)).toThrow(RangeError);
  });

  it('parses allauth 0.51 extra_data, which dumpdata writes as a JSON string', async () => {
    const dumped = JSON.parse(await readFile(fixture.dumpdataPath, 'utf8')) as { model: string; fields: Record<string, unknown> }[];
    expect(typeof dumped.find((entry) => entry.model === 'socialaccount.socialaccount')!.fields.extra_data).toBe('string');
    const accounts = await readAll(await openDjangoDumpdata(fixture.dumpdataPath), 'socialAccounts');
    expect(accounts.find((account) => account.provider === 'github')!.extraData).toMatchObject({ id: 12345, login: 'alice' });
  });

  it("reads the fields the project's user fields come from, as the dump has them, and names the users' other fields", async () => {
    const projectColumns = ['company', 'birth_date', 'phone_extension', 'newsletter', 'nickname'];
    for (const path of [fixture.dumpdataPath, fixture.dumpdataWithIdsPath]) {
      expect(await (await openDjangoDumpdata(path)).userColumns()).toEqual({ project: [], absent: [], unread: ['company', 'birth_date', 'phone_extension', 'newsletter'] });
      const source = await openDjangoDumpdata(path, { projectColumns });
      expect(await source.userColumns()).toEqual({ project: ['company', 'birth_date', 'phone_extension', 'newsletter'], absent: ['nickname'], unread: [] });
      const users = await readAll(source, 'users', 4);
      expect(users).toEqual(expectedDjangoRows(fixture.manifest, projectColumns).users);
      expect(users[0]!.projectColumns).toEqual({ company: 'Wonderland Ltd', birth_date: '1990-04-01', phone_extension: 4021, newsletter: true });
    }
  });

  it('reads the same objects when the file arrives in small pieces', async () => {
    const whole = JSON.parse(await readFile(fixture.dumpdataPath, 'utf8')) as unknown[];
    const pieces: unknown[] = [];
    // 7 bytes at a time: objects, strings, escapes and the password's multibyte characters split across reads.
    for await (const entry of readJsonArrayObjects(fixture.dumpdataPath, 7)) pieces.push(entry);
    expect(pieces).toEqual(whole);
  });
});

const USER_FIELDS = { password: '!unusable', is_superuser: false, is_staff: false, is_active: true, name: '', groups: [], user_permissions: [] };

/** An allauth 65 project's dump, by hand: integer user references, rows out of order, instants with and without 'Z'. */
const ALLAUTH_65_DUMP = [
  { model: 'sessions.session', pk: 'abc', fields: { session_data: 'x', expire_date: '2030-01-01T00:00:00Z' } },
  { model: 'users.user', pk: 7, fields: { ...USER_FIELDS, username: 'zoe', email: 'zoe@example.com', last_login: null, date_joined: '2024-05-06T07:08:09.123456', user_permissions: [['view_user', 'users', 'user']], groups: [['Support']] } },
  { model: 'users.user', pk: 3, fields: { ...USER_FIELDS, username: 'yan', email: 'yan@example.com', last_login: '2024-05-06T09:08:09+02:00', date_joined: '2024-05-06T07:08:09Z' } },
  { model: 'auth.group', pk: 1, fields: { name: 'Support', permissions: [['delete_token', 'authtoken', 'token']] } },
  { model: 'account.emailaddress', pk: 2, fields: { user: 7, email: 'zoe@example.com', verified: true, primary: true } },
  { model: 'socialaccount.socialapp', pk: 1, fields: { provider: 'openid_connect', provider_id: 'corp', name: 'Corp', client_id: 'corp-id', secret: 's3cret', key: '', settings: { server_url: 'https://sso.example.com' }, sites: [] } },
  { model: 'socialaccount.socialaccount', pk: 5, fields: { user: 3, provider: 'corp', uid: 'sub-1', extra_data: { sub: 'sub-1' }, last_login: '2024-05-06T07:08:09Z', date_joined: '2024-05-06T07:08:09Z' } },
  { model: 'socialaccount.socialtoken', pk: 9, fields: { app: null, account: 5, token: 'access', token_secret: 'refresh', expires_at: '2030-01-01T00:00:00Z' } },
  { model: 'mfa.authenticator', pk: 4, fields: { user: 3, type: 'webauthn', data: { name: 'Key', credential: { id: 'abc' }, passwordless: true }, created_at: '2024-01-02T03:04:05.678', last_used_at: null } },
];

describe('openDjangoDumpdata of hand-written dumps', () => {
  it("reads allauth 65's socialapp provider_id and settings, integer user references and instants with or without 'Z'", async () => {
    const source = await openDjangoDumpdata(await dumpFile('allauth-65.json', ALLAUTH_65_DUMP));
    expect(await source.loginField()).toBe('username');
    expect((await readAll(source, 'users')).map((user) => [user.id, user.dateJoined.toISOString(), user.lastLogin?.toISOString() ?? null])).toEqual([
      [3, '2024-05-06T07:08:09.000Z', '2024-05-06T07:08:09.000Z'],
      [7, '2024-05-06T07:08:09.123Z', null],
    ]);
    expect(await readAll(source, 'socialApps')).toEqual([
      { id: 1, provider: 'openid_connect', providerId: 'corp', name: 'Corp', clientId: 'corp-id', secret: 's3cret', key: '', settings: { server_url: 'https://sso.example.com' } },
    ]);
    expect(await readAll(source, 'socialTokens')).toEqual([{ id: 9, appId: null, accountId: 5, token: 'access', tokenSecret: 'refresh', expiresAt: new Date('2030-01-01T00:00:00Z') }]);
    expect(await readAll(source, 'authenticators')).toEqual([
      { id: 4, userId: 3, type: 'webauthn', data: { name: 'Key', credential: { id: 'abc' }, passwordless: true }, createdAt: new Date('2024-01-02T03:04:05.678Z'), lastUsedAt: null },
    ]);
    expect(byGrant(await readAll(source, 'permissions'))).toEqual([
      { userId: 7, appLabel: 'users', codename: 'view_user', group: null },
      { userId: 7, appLabel: 'authtoken', codename: 'delete_token', group: 'Support' },
    ]);
    expect([await source.has('tokens'), await source.count('tokens'), await readAll(source, 'tokens')]).toEqual([false, 0, []]);
  });

  it("keeps the project's fields of each user as the dump has them, whatever they hold, and says nothing of a dump without users", async () => {
    const dump = [
      { model: 'users.user', pk: 2, fields: { ...USER_FIELDS, username: 'two', email: '', last_login: null, date_joined: '2024-05-06T07:08:09Z', bio: 'a lone surrogate \ud800, 山田', prefs: { theme: 'dark' } } },
      // A hand-edited entry may lack a field: the value is absent, not null.
      { model: 'users.user', pk: 1, fields: { ...USER_FIELDS, username: 'one', email: '', last_login: null, date_joined: '2024-05-06T07:08:09Z', bio: null, shoe_size: 44 } },
    ];
    const source = await openDjangoDumpdata(await dumpFile('project-fields.json', dump), { projectColumns: ['bio', 'prefs', 'seats'] });
    expect(await source.userColumns()).toEqual({ project: ['bio', 'prefs'], absent: ['seats'], unread: ['shoe_size'] });
    expect((await readAll(source, 'users')).map((user) => [user.id, user.projectColumns])).toEqual([
      [1, { bio: null }],
      [2, { bio: 'a lone surrogate \ud800, 山田', prefs: { theme: 'dark' } }],
    ]);
    const noUsers = await openDjangoDumpdata(await dumpFile('no-users.json', [ALLAUTH_65_DUMP[3]]), { projectColumns: ['bio'] });
    expect(await noUsers.userColumns()).toEqual({ project: [], absent: [], unread: [] });
  });

  it('resolves a natural key to a user dumped after the entry, and puts every kind in key order', async () => {
    const token = (key: string, user: unknown) => ({ model: 'authtoken.token', pk: key, fields: { user, created: '2024-05-06T07:08:09Z' } });
    const dump = [
      token('b'.repeat(40), ['yan']),
      { model: 'account.emailaddress', pk: 8, fields: { user: ['zoe'], email: 'zoe@example.com', verified: true, primary: true } },
      { model: 'account.emailaddress', pk: 2, fields: { user: 3, email: 'yan@example.com', verified: false, primary: true } },
      token('a'.repeat(40), 7),
      ...ALLAUTH_65_DUMP.filter((entry) => entry.model === 'users.user' || entry.model === 'auth.group'),
      token('C'.repeat(40), ['zoe']),
    ];
    const source = await openDjangoDumpdata(await dumpFile('users-last.json', dump));
    expect((await readAll(source, 'users')).map((user) => user.id)).toEqual([3, 7]);
    expect((await readAll(source, 'emailAddresses', 1)).map((address) => [address.id, address.userId])).toEqual([
      [2, 3],
      [8, 7],
    ]);
    expect((await readAll(source, 'tokens')).map((row) => [row.key[0], row.userId])).toEqual([
      ['C', 7],
      ['a', 7],
      ['b', 3],
    ]);
  });

  it('reads an empty dump as having nothing', async () => {
    const source = await openDjangoDumpdata(await dumpFile('empty.json', '[]\n'));
    for (const kind of DJANGO_KINDS) expect([kind, await source.has(kind), await source.count(kind)]).toEqual([kind, false, 0]);
  });

  it('refuses a permission referred to by id that the dump does not describe, saying to add --natural-foreign', async () => {
    const dump = ALLAUTH_65_DUMP.map((entry) => (entry.pk === 7 ? { ...entry, fields: { ...entry.fields, user_permissions: [42] } } : entry));
    await expect(openDjangoDumpdata(await dumpFile('permission-ids.json', dump))).rejects.toThrow(
      /permission-ids\.json is not a dumpdata file import-django can read: users\.user 7 refers to the permission 42, which the dump does not describe: add --natural-foreign to the dumpdata command/,
    );
  });

  it('refuses references to users, groups or primary keys the dump does not hold', async () => {
    const unknownUser = ALLAUTH_65_DUMP.map((entry) => (entry.model === 'account.emailaddress' ? { ...entry, fields: { ...entry.fields, user: ['nobody'] } } : entry));
    await expect(openDjangoDumpdata(await dumpFile('unknown-user.json', unknownUser))).rejects.toThrow(/account\.emailaddress 2 refers to the user \["nobody"\], who is not among the dump's users\.user entries/);
    const noGroups = ALLAUTH_65_DUMP.filter((entry) => entry.model !== 'auth.group');
    await expect(openDjangoDumpdata(await dumpFile('no-groups.json', noGroups))).rejects.toThrow(/is in the group \["Support"\], which the dump does not hold \(dump auth\.Group with the rest\)/);
    const naturalPrimary = ALLAUTH_65_DUMP.map(({ pk: _, ...entry }) => entry);
    await expect(openDjangoDumpdata(await dumpFile('natural-primary.json', naturalPrimary))).rejects.toThrow(/have no pk: leave --natural-primary out of the dumpdata command/);
    const badDate = ALLAUTH_65_DUMP.map((entry) => (entry.pk === 3 && entry.model === 'users.user' ? { ...entry, fields: { ...entry.fields, date_joined: 'yesterday' } } : entry));
    await expect(openDjangoDumpdata(await dumpFile('bad-date.json', badDate))).rejects.toThrow(/bad-date\.json: users_user 3: date_joined is "yesterday", not a date and time\./);
  });

  it('names a bad value by its table, row and column, never showing a secret', async () => {
    const token = { model: 'authtoken.token', pk: 'c18e7972ab108710e1f326727ae167dd4399f12b', fields: { user: 3, created: 'soon' } };
    await expect(openDjangoDumpdata(await dumpFile('bad-token.json', [...ALLAUTH_65_DUMP, token]))).rejects.toThrow(/^\S+bad-token\.json: authtoken_token 3: created is "soon", not a date and time\.$/);
    const app = { model: 'socialaccount.socialapp', pk: 2, fields: { provider: 'github', name: 'GitHub', client_id: 'id', secret: 12345678, key: '' } };
    const refusal = openDjangoDumpdata(await dumpFile('bad-app.json', [...ALLAUTH_65_DUMP, app]));
    await expect(refusal).rejects.toThrow(/socialaccount_socialapp 2: secret is a number, not text\./);
    await expect(refusal).rejects.not.toThrow(/12345678/);
  });

  it.each([
    ['a file that is not JSON', 'not-json.txt', 'hello, world\n', /it does not begin with a JSON array but with "hello, world/],
    ['a JSON object', 'object.json', '{"model": "users.user"}', /it does not begin with a JSON array but with "\{/],
    ['an array of numbers', 'numbers.json', '[1, 2, 3]', /after entry 0 it has "1, 2, 3\]"/],
    ['an array of other objects', 'objects.json', '[{"name": "x"}]', /its entry 1 is not a dumpdata entry/],
    ['a dump cut short', 'truncated.json', JSON.stringify(ALLAUTH_65_DUMP).slice(0, 1000), /it ends after entry \d+, inside the array/],
    ['an empty file', 'nothing.json', '', /it is empty/],
    ['text after the array', 'trailing.json', '[] []', /after entry 0 it has "\[\]"/],
  ])('refuses %s, naming the file', async (_, name, content, reason) => {
    const path = await dumpFile(name, content);
    const refusal = openDjangoDumpdata(path);
    await expect(refusal).rejects.toThrow(`${path} is not a dumpdata file import-django can read: `);
    await expect(refusal).rejects.toThrow(reason);
  });

  it('refuses a path with no file, or a directory', async () => {
    await expect(openDjangoDumpdata(join(directory, 'missing.json'))).rejects.toThrow(/missing\.json is not a dumpdata file import-django can read: there is no such file\./);
    const folder = join(directory, 'a-directory');
    await mkdir(folder);
    await expect(openDjangoDumpdata(folder)).rejects.toThrow(/a-directory is not a dumpdata file import-django can read: it is a directory\./);
  });
});
