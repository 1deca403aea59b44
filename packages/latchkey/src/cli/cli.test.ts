import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadSettings, type ProjectSettings } from '../config/load.js';
import { openLatchkey } from '../latchkey.js';
import { openDatabase } from '../storage/database.js';
import { userForApiToken } from '../tokens/api-tokens.js';
import { runAsPerson } from '../testing/terminal.js';
import type { ManagementOptions } from './command.js';
import type { ProjectMigrations } from '../storage/migrations/project.js';
import { defineUserFields } from '../core/user-fields.js';

const project: ProjectSettings = { USERNAME_TYPE: 'username', SITE_NAME: 'CLI Test', DOMAIN_NAME: 'cli.example' };
let databaseUrl: string;
let cwd: string;

beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'lk-cli-'));
  databaseUrl = `sqlite:${join(cwd, 'db.sqlite3')}`;
});

/** Runs a command as a person would, typing `answers` at its prompts (on a terminal when `tty`). */
function manage(argv: string[], options: { env?: Record<string, string>; answers?: string[]; tty?: boolean; usernameType?: 'username' | 'email'; options?: ManagementOptions } = {}) {
  return runAsPerson(argv, { ...project, USERNAME_TYPE: options.usernameType ?? 'username' }, {
    ...options,
    cwd,
    env: { NODE_ENV: 'local', DATABASE_URL: databaseUrl, EMAIL_URL: 'memory:', ...options.env },
  });
}

async function users(usernameType: 'username' | 'email' = 'username') {
  const database = await openDatabase({ url: databaseUrl, usernameType });
  try {
    const rows = await database.kysely.selectFrom('latchkey_users').selectAll().execute();
    const emails = await database.kysely.selectFrom('latchkey_email_addresses').selectAll().execute();
    return { rows, emails };
  } finally {
    await database.close();
  }
}

describe('manage migrate', () => {
  it('applies the migrations once, then has nothing to do', async () => {
    const first = await manage(['migrate']);
    expect(first).toMatchObject({ code: 0 });
    expect(first.out).toMatch(/Applied 0001_initial/);
    expect((await manage(['migrate'])).out).toBe('No migrations to apply.\n');
  });

  it('fails with one clear line when PostgreSQL is unreachable', async () => {
    const result = await manage(['migrate'], { env: { DATABASE_URL: 'postgres://app:secret@127.0.0.1:1/app' } });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^Error: .*127\.0\.0\.1:1/);
    expect(result.err).not.toContain('secret');
    expect(result.err.trim().split('\n')).toHaveLength(1);
  });
});

describe('manage makemigration', () => {
  const folder = () => join(cwd, 'src', 'migrations');

  it("writes a dated, empty migration and lists it; migrate applies it after Latchkey's, once", async () => {
    const written = await manage(['makemigration', 'create_notes']);
    expect(written).toMatchObject({ code: 0, err: '' });
    const [file] = readdirSync(folder()).filter((entry) => entry !== 'index.ts');
    expect(file).toMatch(/^\d{8}_\d{6}_create_notes\.ts$/);
    expect(written.out).toBe(`Wrote src/migrations/${file}; listed in src/migrations/index.ts.\n`);
    const name = file!.replace(/\.ts$/, '');
    expect(readFileSync(join(folder(), 'index.ts'), 'utf8')).toContain(`'${name}': m${name},`);

    // The project fills it in, as docs/project-data.md shows.
    writeFileSync(
      join(folder(), file!),
      `import type { ProjectMigration } from '@latchkey/core';
export const migration: ProjectMigration = {
  async up(db) {
    await db.schema.createTable('notes').addColumn('id', 'integer', (column) => column.primaryKey()).addColumn('body', 'text').execute();
  },
};
`,
    );
    const { projectMigrations } = (await import(join(folder(), 'index.ts'))) as { projectMigrations: ProjectMigrations };
    const applied = await manage(['migrate'], { options: { projectMigrations } });
    expect(applied.code).toBe(0);
    expect(applied.out.trim().split('\n').at(-1)).toBe(`Applied ${name}.`);
    expect(applied.out).toMatch(/^Applied 0001_initial\./);
    expect((await manage(['migrate'], { options: { projectMigrations } })).out).toBe('No migrations to apply.\n');
    // Commands that need a migrated database accept it, the project's migrations included.
    expect((await manage(['clearsessions'], { options: { projectMigrations } })).code).toBe(0);
  });

  it("refuses a name that is not lower-case words, and writes nothing", async () => {
    const refused = await manage(['makemigration', 'Add Notes']);
    expect(refused).toMatchObject({ code: 1, out: '' });
    expect(refused.err).toBe('Error: "Add Notes" is not a migration name: use lower-case words joined by underscores, as add_notes.\n');
    expect(() => readdirSync(folder())).toThrow();
  });

  it('writes the columns of the declared user fields the database lacks, which migrate then adds', async () => {
    await manage(['migrate']);
    const userFields = defineUserFields({ company: { type: 'text', label: 'Company' }, birth_date: { type: 'date', label: 'Date of birth' } });
    const written = await manage(['makemigration', 'add_user_fields'], { options: { userFields } });
    expect(written.code).toBe(0);
    const [file] = readdirSync(folder()).filter((entry) => entry !== 'index.ts');
    expect(written.out).toBe(`Wrote src/migrations/${file}; listed in src/migrations/index.ts. It adds the column(s) of company, birth_date.\n`);
    const source = readFileSync(join(folder(), file!), 'utf8');
    expect(source).toContain("await addUserFieldColumn(db, context, 'company', 'text');");
    expect(source).toContain("await addUserFieldColumn(db, context, 'birth_date', 'date');");

    // Run here, outside a project, it takes the helpers from the library's source.
    writeFileSync(join(folder(), file!), source.replace("from '@latchkey/core'", `from '${join(import.meta.dirname, '../storage/migrations/project.js')}'`));
    const { projectMigrations } = (await import(join(folder(), 'index.ts'))) as { projectMigrations: ProjectMigrations };
    // Pending, it holds makemigration back: the columns it adds must not be written twice.
    const early = await manage(['makemigration', 'again'], { options: { userFields, projectMigrations } });
    expect(early.code).toBe(1);
    expect(early.err).toMatch(/^Error: 1 migration\(s\) are not applied yet \(\d{8}_\d{6}_add_user_fields\): run migrate first/);

    expect((await manage(['migrate'], { options: { projectMigrations, userFields } })).out).toMatch(/Applied \d{8}_\d{6}_add_user_fields\.\n$/);
    const database = await openDatabase({ url: databaseUrl, usernameType: 'username', userFields });
    try {
      expect(await database.missingUserFieldColumns()).toEqual([]);
      const ada = await database.store.users.create({ username: 'ada', email: 'ada@example.com', password: '!', dateJoined: new Date(0), ...{ company: 'Engines', birth_date: '1990-04-01' } });
      expect(ada).toMatchObject({ company: 'Engines', birth_date: '1990-04-01' });
    } finally {
      await database.close();
    }
  });

  it("is refused by the commands while one of the project's migrations is pending", async () => {
    await manage(['migrate']);
    const projectMigrations: ProjectMigrations = { '20261203_090000_create_notes': { up: (db) => db.schema.createTable('notes').addColumn('id', 'integer').execute() } };
    const refused = await manage(['clearsessions'], { options: { projectMigrations } });
    expect(refused.code).toBe(1);
    expect(refused.err).toBe('Error: The database is not up to date (1 migration(s) pending: 20261203_090000_create_notes). Run: npm run manage -- migrate\n');
  });
});

describe('manage createsuperuser', () => {
  beforeEach(async () => {
    await manage(['migrate']);
  });

  it('with --noinput takes the password from LATCHKEY_SUPERUSER_PASSWORD and stores the email as verified', async () => {
    const result = await manage(['createsuperuser', '--noinput', '--username', 'root', '--email', 'Root@Example.com'], {
      env: { LATCHKEY_SUPERUSER_PASSWORD: 'a long enough passphrase' },
    });
    expect(result).toMatchObject({ code: 0, out: 'Superuser created successfully.\n' });
    const { rows, emails } = await users();
    expect(rows).toEqual([expect.objectContaining({ username: 'root', email: 'root@example.com' })]);
    expect(Boolean(rows[0]!.is_superuser) && Boolean(rows[0]!.is_staff)).toBe(true);
    expect(emails).toEqual([expect.objectContaining({ email: 'root@example.com' })]);
    expect(Boolean(emails[0]!.verified) && Boolean(emails[0]!.is_primary)).toBe(true);
  });

  it('refuses a duplicate user and a weak password with one error line, writing nothing', async () => {
    const env = { LATCHKEY_SUPERUSER_PASSWORD: 'a long enough passphrase' };
    await manage(['createsuperuser', '--noinput', '--username', 'root', '--email', 'root@example.com'], { env });
    const duplicate = await manage(['createsuperuser', '--noinput', '--username', 'ROOT', '--email', 'other@example.com'], { env });
    expect(duplicate).toMatchObject({ code: 1, err: 'Error: A user with that username already exists.\n' });
    const weak = await manage(['createsuperuser', '--noinput', '--username', 'second', '--email', 'second@example.com'], {
      env: { LATCHKEY_SUPERUSER_PASSWORD: 'password' },
    });
    expect(weak.code).toBe(1);
    expect(weak.err).toMatch(/^Error: This password is too common\./);
    const { rows, emails } = await users();
    expect(rows.map((row) => row.username)).toEqual(['root']);
    expect(emails).toHaveLength(1);
  });

  it('with --noinput and no password, says what is missing', async () => {
    const result = await manage(['createsuperuser', '--noinput', '--username', 'root']);
    expect(result).toMatchObject({ code: 1, err: 'Error: LATCHKEY_SUPERUSER_PASSWORD must be set with --noinput.\n' });
  });

  it('without a terminal and without --noinput, refuses rather than hang', async () => {
    const result = await manage(['createsuperuser']);
    expect(result.code).toBe(1);
    expect(result.err).toContain('needs a terminal');
  });

  it('on a terminal, asks again after a bad answer and a mismatched or weak password', async () => {
    const result = await manage(['createsuperuser'], {
      tty: true,
      answers: ['bad name!', 'admin', 'not-an-email', 'admin@example.com', 'one passphrase', 'another passphrase', '12345678', '12345678', 'a long enough passphrase', 'a long enough passphrase'],
    });
    expect(result.code).toBe(0);
    expect(result.err).toContain('Error: Enter a valid username');
    expect(result.err).toContain('Error: Enter a valid email address.');
    expect(result.err).toContain("Error: Your passwords didn't match.");
    expect(result.err).toContain('Error: This password is too common.');
    expect(result.out).not.toContain('a long enough passphrase');
    expect((await users()).rows.map((row) => row.username)).toEqual(['admin']);
  });

  it('in an email project asks for the email only', async () => {
    databaseUrl = `sqlite:${join(cwd, 'email.sqlite3')}`;
    await manage(['migrate'], { usernameType: 'email' });
    const result = await manage(['createsuperuser', '--noinput', '--email', 'boss@example.com'], {
      usernameType: 'email',
      env: { LATCHKEY_SUPERUSER_PASSWORD: 'a long enough passphrase' },
    });
    expect(result.code).toBe(0);
    const { rows } = await users('email');
    expect(rows).toEqual([expect.objectContaining({ email: 'boss@example.com' })]);
    expect(rows[0]).not.toHaveProperty('username');
  });
});

describe('manage changepassword', () => {
  it('changes the password after two matching, valid entries', async () => {
    await manage(['migrate']);
    await manage(['createsuperuser', '--noinput', '--username', 'root', '--email', 'root@example.com'], {
      env: { LATCHKEY_SUPERUSER_PASSWORD: 'a long enough passphrase' },
    });
    const before = (await users()).rows[0]!.password;
    const result = await manage(['changepassword', 'root'], { tty: true, answers: ['short', 'short', 'brand new passphrase', 'brand new passphrase'] });
    expect(result.code).toBe(0);
    expect(result.err).toContain('too short');
    expect((await users()).rows[0]!.password).not.toBe(before);
    expect((await manage(['changepassword', 'nobody'], { tty: true, answers: [] })).err).toBe('Error: User "nobody" does not exist.\n');
  });
});

describe('manage clearsessions', () => {
  it('removes expired sessions and mail given up on over 30 days ago, and reports how many', async () => {
    await manage(['migrate']);
    const database = await openDatabase({ url: databaseUrl, usernameType: 'username' });
    const old = new Date('2020-01-01T00:00:00.000Z');
    await database.store.sessions.create({ idHash: 'x', userId: null, sealedData: '', createdAt: old, lastSeenAt: old, expiresAt: old, ipAddress: '', userAgent: '' });
    const mail = { recipients: ['ada@example.com'], subject: 'Hello', sealedMessage: 'v1.sealed' };
    const longAgo = await database.store.mailOutbox.add(mail, old);
    await database.store.mailOutbox.abandon(longAgo, old, 'Mailbox unavailable');
    const lately = await database.store.mailOutbox.add(mail, new Date());
    await database.store.mailOutbox.abandon(lately, new Date(), 'Mailbox unavailable');
    await database.close();
    expect(await manage(['clearsessions'])).toMatchObject({
      code: 0,
      out: 'Removed 1 expired session(s), 0 expired rate-limit counter(s), 0 expired one-time claim(s) and 1 mail(s) given up on over 30 days ago.\n',
    });
    const reopened = await openDatabase({ url: databaseUrl, usernameType: 'username' });
    expect((await reopened.store.mailOutbox.list()).map((entry) => entry.id)).toEqual([lately]);
    await reopened.close();
  });
});

describe('manage create-token and delete-token', () => {
  const env = { LATCHKEY_SUPERUSER_PASSWORD: 'a long enough passphrase' };

  beforeEach(async () => {
    await manage(['migrate']);
    await manage(['createsuperuser', '--noinput', '--username', 'root', '--email', 'root@example.com'], { env });
  });

  /** The user a key authenticates, as the server with the same settings (and local secret key) sees it. */
  async function ownerOf(key: string): Promise<string | null | undefined> {
    const settings = loadSettings(project, { env: { NODE_ENV: 'local', DATABASE_URL: databaseUrl, EMAIL_URL: 'memory:' }, cwd });
    const latchkey = await openLatchkey({ settings, migrations: 'require' });
    try {
      return (await userForApiToken(latchkey.deps, key))?.username;
    } finally {
      await latchkey.close();
    }
  }

  it("prints only the user's key, the same on every run, and the key authenticates the user", async () => {
    const first = await manage(['create-token', 'ROOT']);
    expect(first).toMatchObject({ code: 0, err: '' });
    expect(first.out).toMatch(/^[0-9a-f]{40}\n$/);
    expect(await manage(['create-token', 'root'])).toMatchObject({ code: 0, out: first.out });
    expect(await ownerOf(first.out.trim())).toBe('root');
    // Stored only as a hash and a sealed copy.
    const database = await openDatabase({ url: databaseUrl, usernameType: 'username' });
    const rows = await database.kysely.selectFrom('latchkey_api_tokens').selectAll().execute();
    await database.close();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(first.out.trim());
  });

  it('with --reset replaces the key: the old one stops working', async () => {
    const old = (await manage(['create-token', 'root'])).out.trim();
    const reset = await manage(['create-token', '--reset', 'root']);
    expect(reset.code).toBe(0);
    expect(reset.out).toMatch(/^[0-9a-f]{40}\n$/);
    expect(reset.out.trim()).not.toBe(old);
    expect(await ownerOf(old)).toBeUndefined();
    expect(await ownerOf(reset.out.trim())).toBe('root');
  });

  it('deletes the token, after which the key is refused, and says when there is none', async () => {
    const key = (await manage(['create-token', 'root'])).out.trim();
    expect(await manage(['delete-token', 'root'])).toEqual({ code: 0, out: 'Token deleted.\n', err: '' });
    expect(await ownerOf(key)).toBeUndefined();
    expect(await manage(['delete-token', 'root'])).toEqual({ code: 0, out: 'User "root" has no token.\n', err: '' });
    // A new one can be made afterwards, with another key.
    const next = (await manage(['create-token', 'root'])).out.trim();
    expect(next).not.toBe(key);
    expect(await ownerOf(next)).toBe('root');
  });

  it('refuses an unknown user and a missing or extra argument with one error line, writing nothing', async () => {
    for (const command of ['create-token', 'delete-token']) {
      expect(await manage([command, 'nobody'])).toEqual({ code: 1, out: '', err: 'Error: User "nobody" does not exist.\n' });
      expect(await manage([command])).toEqual({ code: 1, out: '', err: `Error: ${command} needs <login>. Run "${command} --help" for its usage.\n` });
      expect(await manage([command, 'root', 'other'])).toEqual({ code: 1, out: '', err: `Error: Unexpected argument 'other'. Run "${command} --help" for its usage.\n` });
    }
    expect(await manage(['delete-token', '--reset', 'root'])).toEqual({ code: 1, out: '', err: 'Error: Unknown option \'--reset\'. Run "delete-token --help" for its usage.\n' });
    const database = await openDatabase({ url: databaseUrl, usernameType: 'username' });
    const rows = await database.kysely.selectFrom('latchkey_api_tokens').selectAll().execute();
    await database.close();
    expect(rows).toEqual([]);
  });

  it('warns on standard error that an inactive user cannot use the key yet', async () => {
    const database = await openDatabase({ url: databaseUrl, usernameType: 'username' });
    await database.kysely.updateTable('latchkey_users').set({ is_active: 0 }).execute();
    await database.close();
    const result = await manage(['create-token', 'root']);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^[0-9a-f]{40}\n$/);
    expect(result.err).toBe('Warning: user "root" is inactive: the token is refused until the account is active again.\n');
    expect(await ownerOf(result.out.trim())).toBeUndefined();
  });

  it('finds the user by email in an email project', async () => {
    databaseUrl = `sqlite:${join(cwd, 'email.sqlite3')}`;
    await manage(['migrate'], { usernameType: 'email' });
    await manage(['createsuperuser', '--noinput', '--email', 'boss@example.com'], { usernameType: 'email', env });
    const result = await manage(['create-token', 'Boss@Example.com'], { usernameType: 'email' });
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toMatch(/^[0-9a-f]{40}\n$/);
    expect(await manage(['delete-token', 'boss@example.com'], { usernameType: 'email' })).toMatchObject({ code: 0, out: 'Token deleted.\n' });
  });
});

describe('manage check', () => {
  it('passes in local mode and reports each deployment problem with --deploy', async () => {
    await manage(['migrate']);
    expect(await manage(['check'])).toMatchObject({ code: 0, out: 'System check identified no issues (0 silenced).\n' });
    const deploy = await manage(['check', '--deploy']);
    expect(deploy.code).toBe(1);
    for (const id of ['W002', 'W004', 'W007', 'W008', 'W009', 'W010', 'W012']) expect(deploy.out).toContain(`(latchkey.${id})`);
    const weakKey = await manage(['check', '--deploy'], { env: { LATCHKEY_SECRET_KEY: 'changeme' } });
    expect(weakKey.out).toContain('(latchkey.W001) LATCHKEY_SECRET_KEY is shorter than 50 characters');
  });

  it('reports a missing secret key in production as one line', async () => {
    const result = await manage(['check', '--deploy'], { env: { NODE_ENV: 'production', EMAIL_URL: 'smtp://127.0.0.1:25', LATCHKEY_ADMIN_URL: 'staff/' } });
    expect(result).toMatchObject({ code: 1, err: 'Error: Production needs these environment variables: LATCHKEY_SECRET_KEY.\n' });
  });

  it('passes --deploy with production settings done right', async () => {
    await manage(['migrate']);
    const result = await manage(['check', '--deploy'], {
      env: {
        NODE_ENV: 'production',
        LATCHKEY_SECRET_KEY: 'k'.repeat(20) + 'abcdefghijklmnopqrstuvwxyz0123456789',
        EMAIL_URL: 'smtp://127.0.0.1:25',
        LATCHKEY_ADMIN_URL: 'staff-x8k2/',
        DEFAULT_FROM_EMAIL: 'CLI Test <noreply@cli.example>',
      },
    });
    expect(result).toMatchObject({ code: 0, out: 'System check identified no issues (0 silenced).\n' });
  });

  it('answers an unknown command or option with one line pointing to the help', async () => {
    expect(await manage(['frobnicate'])).toEqual({ code: 1, out: '', err: 'Error: Unknown command "frobnicate". Run "help" for the list of commands.\n' });
    expect(await manage(['check', '--bogus'])).toEqual({ code: 1, out: '', err: 'Error: Unknown option \'--bogus\'. Run "check --help" for its usage.\n' });
  });
});

describe('the latchkey binary', () => {
  it("runs a command against the project's settings module", async () => {
    const { execFile } = await import('node:child_process');
    const bin = new URL('../../bin/latchkey.js', import.meta.url).pathname;
    const settingsModule = new URL('../../../../examples/site/src/config/settings.ts', import.meta.url).pathname;
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [bin, ...args], { cwd, env: { PATH: process.env.PATH, NODE_ENV: 'development', DATABASE_URL: databaseUrl } }, (error, stdout, stderr) =>
          resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
        );
      });
    expect(await run(['--settings', settingsModule, 'migrate'])).toMatchObject({ code: 0, stdout: 'Applied 0001_initial.\nApplied 0002_audit_and_rate_limits.\nApplied 0003_mfa.\nApplied 0004_api_tokens.\nApplied 0005_socialaccount.\nApplied 0006_admin_permissions.\nApplied 0007_admin_indexes.\nApplied 0008_audit_target_user.\nApplied 0009_webauthn.\nApplied 0010_mail_outbox.\nApplied 0011_sealed_session_data.\nApplied 0012_user_language.\n' });
    expect(await run(['migrate'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^Error: cannot load the settings module src\/config\/settings\.ts/) as unknown });
  });
});
