/**
 * The import's rules for the project's own user fields (docs/user-fields.md), on rows held in
 * memory as a source gives them (the values as Django's dumpdata writes them), one of every
 * field type (testing/user-fields.ts): what each value becomes, what does not fit and stops the
 * import, and what the report says of users_user's other columns. The same from a real Django
 * project's database and dump is import-django.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { defineUserFields, type UserFieldSet } from '../../core/user-fields.js';
import { createKyselyImportTarget } from '../../storage/kysely/django-import-target.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { userFieldMigrations } from '../../testing/django-user-fields.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { TEST_USER_FIELDS, TEST_USER_FIELD_MIGRATIONS } from '../../testing/user-fields.js';
import type { DjangoKind, DjangoUser, DjangoUserColumns } from '../model.js';
import type { DjangoSource } from '../ports.js';
import { djangoColumnsOf } from '../user-fields.js';
import { importDjangoAccounts, type ImportReport } from './import-accounts.js';
import { verifyDjangoImport } from './verify-import.js';

const JOINED = new Date('2021-03-04T05:06:07.123Z');
const HASH = 'pbkdf2_sha256$260000$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGg=';

function djangoUser(id: number, projectColumns: Record<string, unknown>): DjangoUser {
  return { id, username: null, email: `user${id}@example.com`, name: '', password: HASH, isActive: true, isStaff: false, isSuperuser: false, dateJoined: JOINED, lastLogin: null, projectColumns };
}

/** Users only, with users_user's columns as `columns` says (by default: every column of TEST_USER_FIELDS, nothing else). */
function usersSource(users: DjangoUser[], columns: DjangoUserColumns = { project: djangoColumnsOf(TEST_USER_FIELDS.fields), absent: [], unread: [] }): DjangoSource {
  return {
    description: 'users in memory',
    loginField: () => Promise.resolve('email'),
    userColumns: () => Promise.resolve(columns),
    has: (kind) => Promise.resolve(kind === 'users'),
    count: (kind) => Promise.resolve(kind === 'users' ? users.length : 0),
    async *rows<K extends DjangoKind>(kind: K, batchSize: number) {
      if (kind !== 'users') return;
      for (let start = 0; start < users.length; start += batchSize) yield await Promise.resolve(users.slice(start, start + batchSize) as never);
    },
    close: () => Promise.resolve(),
  };
}

/** Every column empty, as Django leaves a user who gave nothing (NULL where the column allows it). */
const EMPTY_COLUMNS = { company: '', birth_date: null, plan: '', newsletter: false, seats: null, bio: '', billing_email: '', website: '' };

for (const kind of testDatabaseKinds()) {
  describe(`import-django's user fields on ${kind}`, () => {
    let latchkey: TestLatchkey | undefined;
    afterEach(async () => {
      await latchkey?.destroy();
      latchkey = undefined;
    });

    async function setUp(userFields: UserFieldSet = TEST_USER_FIELDS): Promise<TestLatchkey> {
      const projectMigrations = userFields === TEST_USER_FIELDS ? TEST_USER_FIELD_MIGRATIONS : userFieldMigrations(userFields);
      latchkey = await createTestLatchkey({ kind, usernameType: 'email', userFields, projectMigrations });
      return latchkey;
    }

    function run(instance: TestLatchkey, source: DjangoSource, dryRun = false): Promise<ImportReport> {
      const { database } = instance;
      const target = createKyselyImportTarget(database.kysely, database.dialect, { usernameType: database.usernameType, userFields: database.userFields.fields });
      return importDjangoAccounts(instance.deps, source, target, { dryRun, batchSize: 2 });
    }

    const stored = async (instance: TestLatchkey, id: number) => (await instance.deps.store.users.findById(id)) as User & Record<string, unknown>;

    it("carries every type's value as Django stored it: not trimmed, not judged by the project's check, nor by required", async () => {
      const instance = await setUp();
      const full = {
        company: '  Acme  ',
        // In the future, which the field's own check refuses on a form: stored values are not judged again.
        birth_date: '2999-01-01',
        plan: 'team',
        newsletter: true,
        seats: 12,
        bio: 'Line one\nLine two',
        billing_email: 'Billing@Example.com',
        website: 'https://acme.example/about',
      };
      const users = [
        djangoUser(1, full),
        // NULL where Django allows it: the field's empty value; birth_date is required, where a form asks it.
        djangoUser(2, { company: null, birth_date: null, plan: null, newsletter: null, seats: null, bio: null, billing_email: null, website: null }),
        // A row without the columns (a hand-edited dump's entry): the empty values too.
        djangoUser(3, {}),
      ];
      const source = usersSource(users);
      const report = await run(instance, source);
      expect(report.counts.users).toEqual({ read: 3, inserted: 3, present: 0, skipped: 0 });
      expect(report).toMatchObject({ undeclaredColumns: [], fieldsWithoutColumn: [] });
      expect(await stored(instance, 1)).toMatchObject(full);
      expect(typeof (await stored(instance, 1)).seats).toBe('number');
      expect(await stored(instance, 2)).toMatchObject(EMPTY_COLUMNS);
      expect(await stored(instance, 3)).toMatchObject(EMPTY_COLUMNS);
      expect((await verifyDjangoImport(instance.deps, source)).differences).toEqual([]);
      // A second run finds them there and changes nothing, even a value Django changed since.
      const changed = usersSource([djangoUser(1, { ...full, company: 'Acme Two' })]);
      expect((await run(instance, changed)).counts.users).toEqual({ read: 1, inserted: 0, present: 1, skipped: 0 });
      expect((await stored(instance, 1)).company).toBe('  Acme  ');
      expect((await verifyDjangoImport(instance.deps, changed)).differences).toEqual([{ kind: 'users', id: '1', problem: 'differs in company' }]);
    });

    it('stops, writing nothing, when values do not fit their fields, and names every one (a dry run too)', async () => {
      const instance = await setUp();
      const users = [
        djangoUser(1, { ...EMPTY_COLUMNS, company: 'x'.repeat(101), plan: 'gold', seats: 0 }),
        djangoUser(2, { ...EMPTY_COLUMNS, birth_date: '2023-02-30', newsletter: 1, seats: '12' }),
        djangoUser(3, { ...EMPTY_COLUMNS, billing_email: 'not an address', website: 'ftp://files.example', bio: 'nul \0 inside' }),
        djangoUser(4, { ...EMPTY_COLUMNS, birth_date: '2021-03-04 05:06:07+00', seats: 4.5, company: { name: 'Acme' } }),
        djangoUser(5, { ...EMPTY_COLUMNS, company: 'fits' }),
      ];
      for (const dryRun of [false, true]) {
        const refusal = run(instance, usersSource(users), dryRun);
        const message = await refusal.then(() => '', (error: Error) => error.message);
        expect(message).toMatch(/^12 value\(s\) of users_user do not fit the user fields this project declares, so nothing was imported\. Change the declaration .* and run the import again \(node_modules\/@latchkey\/core\/docs\/migrating-from-django\.md\):\n/);
        expect(message.split('\n').slice(1)).toEqual([
          '  users_user 1.company: Ensure this value has at most 100 characters (it has 101).',
          '  users_user 1.plan: Select a valid choice. gold is not one of the available choices.',
          '  users_user 1.seats: Ensure this value is greater than or equal to 1.',
          '  users_user 2.birth_date: "2023-02-30" is not a day (YYYY-MM-DD).',
          '  users_user 2.newsletter: 1 is not true or false.',
          '  users_user 2.seats: "12" is not a whole number.',
          '  users_user 3.bio: Null characters are not allowed.',
          '  users_user 3.billing_email: Enter a valid email address.',
          '  users_user 3.website: Enter a valid URL.',
          '  users_user 4.company: {"name":"Acme"} is not text.',
          '  users_user 4.birth_date: "2021-03-04 05:06:07+00" is not a day (YYYY-MM-DD).',
          '  users_user 4.seats: 4.5 is not a whole number.',
        ]);
        expect(await instance.deps.store.users.count()).toBe(0);
      }
    });

    it('names the first twenty values that do not fit, and counts the others', async () => {
      const fields = defineUserFields({ code: { type: 'text', label: 'Code', maxLength: 2, djangoColumn: 'legacy_code' } });
      const instance = await setUp(fields);
      const users = Array.from({ length: 25 }, (_, index) => djangoUser(index + 1, { legacy_code: 'abc' }));
      const message = await run(instance, usersSource(users, { project: ['legacy_code'], absent: [], unread: [] })).then(() => '', (error: Error) => error.message);
      const lines = message.split('\n');
      expect(lines[0]).toMatch(/^25 value\(s\) of users_user/);
      expect(lines.slice(1, 3)).toEqual(['  users_user 1.legacy_code (field code): Ensure this value has at most 2 characters (it has 3).', '  users_user 2.legacy_code (field code): Ensure this value has at most 2 characters (it has 3).']);
      expect(lines.slice(21)).toEqual(['  and 5 more.']);
      expect(await instance.deps.store.users.count()).toBe(0);
    });

    it("reports users_user's columns nobody declared, and the fields whose column it lacks, and imports all the same", async () => {
      const fields = defineUserFields({
        company: { type: 'text', label: 'Company' },
        extension: { type: 'integer', label: 'Extension', djangoColumn: 'phone_ext' },
        plan: { type: 'choice', label: 'Plan', choices: [['free', 'Free']] },
      });
      const instance = await setUp(fields);
      const source = usersSource([djangoUser(1, { company: 'Acme' })], { project: ['company'], absent: ['phone_ext', 'plan'], unread: ['twitter', 'avatar'] });
      const report = await run(instance, source);
      expect(report).toMatchObject({
        undeclaredColumns: ['avatar', 'twitter'],
        fieldsWithoutColumn: [
          { field: 'extension', column: 'phone_ext' },
          { field: 'plan', column: 'plan' },
        ],
      });
      expect(await stored(instance, 1)).toMatchObject({ company: 'Acme', extension: null, plan: '' });
    });

    it("refuses, before reading a user, a field from the password column and a source not opened for a field's column", async () => {
      const fromPassword = defineUserFields({ secret: { type: 'text', label: 'Secret', djangoColumn: 'password' } });
      const instance = await setUp(fromPassword);
      await expect(run(instance, usersSource([djangoUser(1, {})], { project: ['password'], absent: [], unread: [] }))).rejects.toThrow(
        /^The user field 'secret' comes from users_user\.password, the password hash, which no field may hold/,
      );
      const unopened = usersSource([djangoUser(1, {})], { project: [], absent: [], unread: ['secret'] });
      const fields = defineUserFields({ nickname: { type: 'text', label: 'Nickname' } });
      const other = await createTestLatchkey({ kind, usernameType: 'email', userFields: fields, projectMigrations: userFieldMigrations(fields) });
      try {
        await expect(run(other, unopened)).rejects.toThrow('The Django source was opened without the column(s) nickname of the project\'s user fields');
        expect(await other.deps.store.users.count()).toBe(0);
      } finally {
        await other.destroy();
      }
      expect(await instance.deps.store.users.count()).toBe(0);
    });
  });
}
