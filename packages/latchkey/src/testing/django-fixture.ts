/**
 * A real cookiecutter-django project's accounts, made by real Django (Debian's Django 3.2,
 * django-allauth 0.51, Django REST framework 3.14) for the import-django tests: the fixture
 * project in django-project/ migrates a fresh database, creates its users, email addresses, API
 * tokens, MFA authenticators, social apps, accounts and tokens and admin permissions, dumps them as
 * an operator would, and writes a manifest of what a test must find after reading or importing
 * them. One Python process per fixture: about two seconds, most of it Django's migrations and
 * password hashes at Django's own costs.
 *
 * SQLite: a file in a new temporary directory. PostgreSQL: a new database on TEST_DATABASE_URL's
 * server (Django creates its tables in a database's public schema, so a schema of the test
 * database would not do). cleanup() removes either.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { UsernameType } from '../config/settings.js';
import type { DjangoKind, DjangoRows } from '../django-import/model.js';
import { runAdminStatement, testPostgresUrl } from './database.js';

// Debian's interpreter, which has the python3-django* packages; the python3 on PATH may be another.
const PYTHON = '/usr/bin/python3';
// Beside the library's other test fixtures, outside src/, so the build never ships it.
const PROJECT = fileURLToPath(new URL('../../test/fixtures/django-project/', import.meta.url));
const DEBIAN_PACKAGES = 'python3-django python3-django-allauth python3-djangorestframework python3-argon2 python3-bcrypt python3-psycopg2';

/** ISO 8601 in UTC to the millisecond, as Date.toISOString() writes it. */
type Instant = string;

/**
 * The columns the fixture's users.User adds to cookiecutter's (ProfileColumns in
 * django-project/users/models.py): a CharField, a DateField, a PositiveIntegerField and a
 * BooleanField. alice has all four, bob a company with text beyond Latin-1, carol a day and a
 * number but a blank company; the others Django's defaults.
 */
export interface DjangoProfileColumns {
  company: string;
  birth_date: string | null;
  phone_extension: number | null;
  newsletter: boolean;
}

/** What a test must find after reading or importing the fixture (django-project/fixture/manifest.py writes it). */
export interface DjangoFixtureManifest {
  usernameType: UsernameType;
  /** The dumpdata commands the fixture's dumps are the output of, with their --output. */
  dumpdataCommands: string[];
  /** By id. */
  users: {
    id: number;
    /** What the user signs in with: the username, or the email when usernameType is 'email'. */
    login: string;
    /** Null when the user model has no username. */
    username: string | null;
    email: string;
    name: string;
    /** In clear; null for the user whose password is unusable. */
    password: string | null;
    /** Django's hasher: 'argon2', 'pbkdf2_sha256', 'pbkdf2_sha1', 'bcrypt_sha256', 'bcrypt'; null with no usable password. */
    hasher: string | null;
    /** users_user.password as Django stored it. */
    encodedPassword: string;
    isActive: boolean;
    isStaff: boolean;
    isSuperuser: boolean;
    dateJoined: Instant;
    lastLogin: Instant | null;
    /** users.User's profile columns, as dumpdata writes them (a day as 'YYYY-MM-DD', NULL as null): what the project's user fields come from. */
    profileColumns: DjangoProfileColumns;
  }[];
  emailAddresses: { id: number; userId: number; email: string; verified: boolean; primary: boolean }[];
  /** By key. */
  tokens: { key: string; userId: number; created: Instant }[];
  /** mfa_authenticator's rows as stored. */
  authenticators: { id: number; userId: number; type: string; data: Record<string, unknown>; createdAt: Instant; lastUsedAt: Instant | null }[];
  /** The TOTP authenticators' base32 secrets. */
  totp: { id: number; userId: number; secret: string }[];
  /** The codes each recovery_codes row stands for, derived from its seed as allauth does (or its migrated_codes). */
  recoveryCodes: { id: number; userId: number; unusedCodes: string[]; usedCodes: string[]; migrated: boolean }[];
  /** allauth 0.51's apps: `provider` is 'github', or 'corp' for the OpenID Connect server (0.51 had no provider_id). */
  socialApps: { id: number; provider: string; name: string; clientId: string; secret: string; key: string }[];
  socialAccounts: { id: number; userId: number; provider: string; uid: string; extraData: Record<string, unknown>; dateJoined: Instant; lastLogin: Instant }[];
  socialTokens: { id: number; appId: number; accountId: number; token: string; tokenSecret: string; expiresAt: Instant | null }[];
  /** Every permission a user holds, directly (group null) or through the named group. */
  permissions: { userId: number; appLabel: string; codename: string; group: string | null }[];
}

export interface DjangoFixtureOptions {
  usernameType: UsernameType;
  database: 'sqlite' | 'postgres';
}

export interface DjangoFixture {
  /** `sqlite:/absolute/path` or `postgres://...`: what `import-django` is given. */
  databaseUrl: string;
  /** `dumpdata ... --natural-foreign` of the account apps (manifest.dumpdataCommands[0]). */
  dumpdataPath: string;
  /** The same dump with integer references, plus auth.Permission and contenttypes (manifest.dumpdataCommands[1]). */
  dumpdataWithIdsPath: string;
  manifest: DjangoFixtureManifest;
  /** Removes the temporary directory and drops the PostgreSQL database. */
  cleanup(): Promise<void>;
}


/**
 * Why the fixture cannot be built on this machine (Debian's Django packages are missing), or
 * null. The suites that need it are left out then, as the global setup says in one line; under CI,
 * which installs the packages, a missing package is a broken build and throws.
 */
export function djangoFixtureUnavailable(): string | null {
  try {
    execFileSync(PYTHON, ['-c', 'import django, allauth, rest_framework, argon2, bcrypt, psycopg2'], { stdio: 'ignore' });
    return null;
  } catch {
    const reason = `${PYTHON} cannot import Django and its apps (apt-get install ${DEBIAN_PACKAGES})`;
    if (process.env.CI) throw new Error(reason);
    return reason;
  }
}

/** A new PostgreSQL database for Django, and what drops it. */
async function createPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const serverUrl = testPostgresUrl();
  if (serverUrl === undefined) throw new Error('createDjangoFixture({ database: "postgres" }) needs TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/postgres.');
  // Our own name, safe to splice into the statements.
  const name = `latchkey_django_${randomBytes(6).toString('hex')}`;
  await runAdminStatement(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // WITH (FORCE): a test that failed may have left a connection open.
  return { url: url.toString(), drop: () => runAdminStatement(serverUrl, `drop database if exists ${name} with (force)`) };
}

async function buildFixture(usernameType: UsernameType, databaseUrl: string, outputs: { manifest: string; dumpdata: string; dumpdataIds: string }): Promise<void> {
  const args = ['manage.py', 'build_fixture', '--manifest', outputs.manifest, '--dumpdata', outputs.dumpdata, '--dumpdata-ids', outputs.dumpdataIds];
  const env = {
    ...process.env,
    DJANGO_SETTINGS_MODULE: 'config.settings',
    DJANGO_USERNAME_TYPE: usernameType,
    DJANGO_DATABASE_URL: databaseUrl,
    // No __pycache__ directories in the source tree.
    PYTHONDONTWRITEBYTECODE: '1',
  };
  try {
    await promisify(execFile)(PYTHON, args, { cwd: PROJECT, env, maxBuffer: 16 << 20 });
  } catch (error) {
    const { stderr = '', code } = error as { stderr?: string; code?: unknown };
    const missing = code === 'ENOENT' || /ModuleNotFoundError|ImportError/.test(stderr);
    const advice = missing ? `: ${PYTHON} needs Django and its apps (apt-get install ${DEBIAN_PACKAGES})` : '';
    throw new Error(`The Django fixture project failed${advice}.\n${stderr.trim().split('\n').slice(-15).join('\n')}`, { cause: error });
  }
}

export async function createDjangoFixture(options: DjangoFixtureOptions): Promise<DjangoFixture> {
  const directory = await mkdtemp(join(tmpdir(), 'latchkey-django-'));
  let dropDatabase = () => Promise.resolve();
  const cleanup = async () => {
    await dropDatabase();
    await rm(directory, { recursive: true, force: true });
  };
  try {
    let databaseUrl = `sqlite:${join(directory, 'django.sqlite3')}`;
    if (options.database === 'postgres') {
      const created = await createPostgresDatabase();
      databaseUrl = created.url;
      dropDatabase = created.drop;
    }
    const outputs = { manifest: join(directory, 'manifest.json'), dumpdata: join(directory, 'dumpdata.json'), dumpdataIds: join(directory, 'dumpdata-ids.json') };
    await buildFixture(options.usernameType, databaseUrl, outputs);
    const manifest = JSON.parse(await readFile(outputs.manifest, 'utf8')) as DjangoFixtureManifest;
    return { databaseUrl, dumpdataPath: outputs.dumpdata, dumpdataWithIdsPath: outputs.dumpdataIds, manifest, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

const dateOrNull = (instant: Instant | null) => (instant === null ? null : new Date(instant));

/**
 * The rows a DjangoSource must yield for this fixture, kind by kind, in its order (permissions in
 * the manifest's: by user, direct grants first). Social apps read as allauth 0.51 kept them:
 * without provider_id and settings. Users hold the profile columns the source was opened to read
 * (`projectColumns`) that the fixture has.
 */
export function expectedDjangoRows(manifest: DjangoFixtureManifest, projectColumns: readonly string[] = []): { [K in DjangoKind]: DjangoRows[K][] } {
  const profileOf = (columns: DjangoProfileColumns): Record<string, unknown> =>
    Object.fromEntries(projectColumns.filter((column) => column in columns).map((column) => [column, columns[column as keyof DjangoProfileColumns]]));
  return {
    users: manifest.users.map(({ id, username, email, name, encodedPassword, isActive, isStaff, isSuperuser, dateJoined, lastLogin, profileColumns }) => ({
      id,
      username,
      email,
      name,
      password: encodedPassword,
      isActive,
      isStaff,
      isSuperuser,
      dateJoined: new Date(dateJoined),
      lastLogin: dateOrNull(lastLogin),
      projectColumns: profileOf(profileColumns),
    })),
    emailAddresses: manifest.emailAddresses,
    tokens: manifest.tokens.map((token) => ({ ...token, created: new Date(token.created) })),
    authenticators: manifest.authenticators.map((row) => ({ ...row, createdAt: new Date(row.createdAt), lastUsedAt: dateOrNull(row.lastUsedAt) })),
    socialApps: manifest.socialApps.map((app) => ({ ...app, providerId: '', settings: {} })),
    socialAccounts: manifest.socialAccounts.map((account) => ({ ...account, dateJoined: new Date(account.dateJoined), lastLogin: new Date(account.lastLogin) })),
    socialTokens: manifest.socialTokens.map((token) => ({ ...token, expiresAt: dateOrNull(token.expiresAt) })),
    permissions: manifest.permissions,
  };
}
