/**
 * `manage import-django` as an operator runs it: from a real Django project's SQLite database and
 * its dumpdata file (test/fixtures/django-project/), into a site's SQLite file. What it prints, what a
 * dry run and a second run do, the reverse check, the refusals, and that no secret of the source
 * ever reaches the terminal. The journey after an import (signing in, tokens, codes) is
 * django-import/import-django.test.ts. The fixture's users.User has columns of its own
 * (testing/django-fixture.ts): named when the project does not declare them, carried into the
 * project's user fields when it does.
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../account/model.js';
import type { ProjectSettings } from '../config/load.js';
import { defineUserFields, type UserFieldSet } from '../core/user-fields.js';
import { openDatabase } from '../storage/database.js';
import { djangoFixtureUnavailable, createDjangoFixture, type DjangoFixture } from '../testing/django-fixture.js';
import { DJANGO_PROFILE_FIELDS, userFieldMigrations } from '../testing/django-user-fields.js';
import { runAsPerson } from '../testing/terminal.js';
import type { ManagementOptions } from './command.js';

const project: ProjectSettings = { USERNAME_TYPE: 'email', SITE_NAME: 'Import Test', DOMAIN_NAME: 'import.example' };

describe.skipIf(djangoFixtureUnavailable() !== null)('manage import-django', () => {
  let fixture: DjangoFixture;
  let cwd: string;
  /** Everything every command wrote, searched for secrets at the end. */
  const written: string[] = [];

  beforeAll(async () => {
    fixture = await createDjangoFixture({ usernameType: 'email', database: 'sqlite' });
  }, 120_000);

  afterAll(async () => {
    await fixture?.cleanup();
  });

  /** A fresh site: its own working directory (local mode keeps its secret key there) and SQLite file, migrated. */
  async function freshSite(settings: ProjectSettings = project, options?: ManagementOptions): Promise<string> {
    cwd = mkdtempSync(join(tmpdir(), 'lk-import-django-'));
    expect((await manage(['migrate'], settings, options)).code).toBe(0);
    return cwd;
  }

  async function manage(argv: string[], settings: ProjectSettings = project, options?: ManagementOptions) {
    const result = await runAsPerson(argv, settings, {
      cwd,
      env: { NODE_ENV: 'local', DATABASE_URL: `sqlite:${join(cwd, 'db.sqlite3')}`, EMAIL_URL: 'memory:' },
      ...(options ? { options } : {}),
    });
    written.push(result.out, result.err);
    return result;
  }

  /** What a project's manage script passes when it declares `userFields` (src/manage.ts). */
  const declaring = (userFields: UserFieldSet): ManagementOptions => ({ userFields, projectMigrations: userFieldMigrations(userFields) });

  /** The users of these ids as the site holds them, with the project's fields. */
  async function storedUsers(ids: number[], userFields: UserFieldSet): Promise<(User & Record<string, unknown>)[]> {
    const database = await openDatabase({ url: `sqlite:${join(cwd, 'db.sqlite3')}`, usernameType: 'email', userFields });
    try {
      return (await Promise.all(ids.map((id) => database.store.users.findById(id)))) as (User & Record<string, unknown>)[];
    } finally {
      await database.close();
    }
  }

  async function userCount(): Promise<number> {
    const database = await openDatabase({ url: `sqlite:${join(cwd, 'db.sqlite3')}`, usernameType: 'email' });
    try {
      return await database.store.users.count();
    } finally {
      await database.close();
    }
  }

  it('reports a dry run without writing, imports, finds everything there on a second run, and verifies', async () => {
    await freshSite();
    const { manifest } = fixture;
    const dryRun = await manage(['import-django', fixture.dumpdataPath, '--dry-run']);
    expect(dryRun.code).toBe(0);
    expect(dryRun.err).toContain('(dry run: nothing will be written)');
    expect(dryRun.out).toMatch(/users \(users_user\)\s+9\s+9\s+0\s+0\n/);
    expect(dryRun.out).toContain('Dry run: nothing was written');
    expect(await userCount()).toBe(0);

    const imported = await manage(['import-django', fixture.databaseUrl]);
    expect(imported.code).toBe(0);
    expect(imported.err).toMatch(/^Importing from SQLite database .*\.\n$/);
    expect(imported.out).toMatch(/users \(users_user\)\s+9\s+9\s+0\s+0\n/);
    expect(imported.out).toMatch(/API tokens \(authtoken_token\)\s+3\s+3\s+0\s+0\n/);
    expect(imported.out).toContain('socialaccount_socialapp 2: Latchkey has no provider "corp"');
    expect(imported.out).toMatch(/Imported \d+ row\(s\) in one transaction\.\n$/);
    // The project declares no user fields: the fixture's own columns are named, and the import goes on.
    expect(imported.out).toContain(
      'users_user has columns this project does not declare: birth_date, company, newsletter, phone_extension — declare them in src/users/fields.ts to import them (node_modules/@latchkey/core/docs/user-fields.md).\n',
    );
    expect(dryRun.out).toContain('users_user has columns this project does not declare: birth_date, company, newsletter, phone_extension');
    expect(await userCount()).toBe(manifest.users.length);

    const again = await manage(['import-django', fixture.dumpdataPath]);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/users \(users_user\)\s+9\s+0\s+9\s+0\n/);
    expect(again.out).toContain('Nothing new to import');

    const verified = await manage(['import-django', fixture.dumpdataWithIdsPath, '--verify']);
    expect(verified).toMatchObject({ code: 0, err: '' });
    expect(verified.out).toContain(`Checked ${manifest.users.length} of ${manifest.users.length} user(s)`);
    expect(verified.out).toContain('Every row checked matches the source.');
  }, 120_000);

  it("carries the columns the project declares as user fields, typed, from the database and from a dump, and names the rest", async () => {
    const options = declaring(DJANGO_PROFILE_FIELDS);
    const { manifest } = fixture;
    for (const source of [fixture.databaseUrl, fixture.dumpdataPath]) {
      await freshSite(project, options);
      const imported = await manage(['import-django', source], project, options);
      expect(imported.code).toBe(0);
      expect(imported.out).toContain('users_user has columns this project does not declare: newsletter, phone_extension — declare them in src/users/fields.ts');
      expect(imported.out).not.toContain('has no column for the user field');
      const users = await storedUsers(manifest.users.map((user) => user.id), DJANGO_PROFILE_FIELDS);
      expect(users.map((user) => ({ id: user.id, company: user.company, birth_date: user.birth_date }))).toEqual(
        manifest.users.map((user) => ({ id: user.id, company: user.profileColumns.company, birth_date: user.profileColumns.birth_date })),
      );
      expect(users[0]).toMatchObject({ company: 'Wonderland Ltd', birth_date: '1990-04-01' });
      const verified = await manage(['import-django', source, '--verify'], project, options);
      expect(verified.out).toContain('Every row checked matches the source.');
    }
  }, 120_000);

  it('names the fields Django has no column for, and stops, writing nothing, at a value that does not fit', async () => {
    const withoutColumn = declaring(defineUserFields({ company: { type: 'text', label: 'Company' }, nickname: { type: 'text', label: 'Nickname', djangoColumn: 'nick' } }));
    await freshSite(project, withoutColumn);
    const imported = await manage(['import-django', fixture.databaseUrl, '--dry-run'], project, withoutColumn);
    expect(imported.code).toBe(0);
    expect(imported.out).toContain(
      'users_user has no column for the user field(s) nickname (column nick): their users get the empty value. If Django names the column otherwise, give the field its djangoColumn (node_modules/@latchkey/core/docs/user-fields.md).\n',
    );

    const tooShort = declaring(defineUserFields({ company: { type: 'text', label: 'Company', maxLength: 10 } }));
    await freshSite(project, tooShort);
    const refused = await manage(['import-django', fixture.dumpdataPath], project, tooShort);
    expect(refused.code).toBe(1);
    expect(refused.out).toBe('');
    const [alice, bob] = fixture.manifest.users;
    expect(refused.err).toBe(
      `Importing from dumpdata file ${fixture.dumpdataPath}.\n` +
        'Error: 2 value(s) of users_user do not fit the user fields this project declares, so nothing was imported. Change the declaration (a longer maxLength, another choice, the right type) or the values in Django, and run the import again (node_modules/@latchkey/core/docs/migrating-from-django.md):\n' +
        `  users_user ${alice!.id}.company: Ensure this value has at most 10 characters (it has 14).\n` +
        `  users_user ${bob!.id}.company: Ensure this value has at most 10 characters (it has 26).\n`,
    );
    expect(await userCount()).toBe(0);
  }, 60_000);

  it('refuses a project whose users log in by the other field, and sources it cannot open, in one line', async () => {
    const byUsernameProject: ProjectSettings = { ...project, USERNAME_TYPE: 'username' };
    await freshSite(byUsernameProject);
    const byUsername = await manage(['import-django', fixture.databaseUrl], byUsernameProject);
    expect(byUsername.code).toBe(1);
    expect(byUsername.err).toMatch(/\nError: The Django project's users log in by email .* username_type is "username"\. .*\n$/);

    await freshSite();
    const missing = await manage(['import-django', join(cwd, 'no-such-dump.json')]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^Error: .*no-such-dump\.json.*\n$/);
    const notDjango = await manage(['import-django', `sqlite:${join(cwd, 'db.sqlite3')}`]);
    expect(notDjango.code).toBe(1);
    expect(notDjango.err).toMatch(/^Error: .*users_user.*\n$/);
    expect((await manage(['import-django'])).err).toBe('Error: import-django needs <source>. Run "import-django --help" for its usage.\n');
    expect(await userCount()).toBe(0);
  }, 60_000);

  afterAll(() => {
    const { manifest } = fixture;
    const secrets = [
      ...manifest.users.flatMap((user) => (user.password === null ? [] : [user.password, user.encodedPassword])),
      ...manifest.tokens.map((token) => token.key),
      ...manifest.totp.map((totp) => totp.secret),
      ...manifest.recoveryCodes.flatMap((set) => [...set.unusedCodes, ...set.usedCodes]),
      ...manifest.socialApps.map((app) => app.secret),
      ...manifest.socialTokens.flatMap((token) => [token.token, token.tokenSecret].filter((value) => value !== '')),
    ];
    for (const text of written) for (const secret of secrets) expect(text).not.toContain(secret);
    return rm(cwd, { recursive: true, force: true });
  });
});
