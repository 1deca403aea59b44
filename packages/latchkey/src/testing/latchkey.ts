import type { ProjectMigrations } from '../storage/migrations/project.js';
import type { UserFieldSet } from '../core/user-fields.js';
import type { AccountAdapter } from '../account/adapter.js';
import type { SocialAccountAdapter } from '../socialaccount/adapter.js';
import { loadSettings, type ProjectSettings } from '../config/load.js';
import type { Settings, SettingValues } from '../config/settings.js';
import { ManualClock } from '../core/clock.js';
import { openLatchkey, type InternalLatchkey, type Latchkey, type LatchkeyLog } from '../latchkey.js';
import type { ProviderKind } from '../socialaccount/providers/kind.js';
import { MemoryMailer } from '../mail/index.js';
import type { UsernameType } from '../config/settings.js';
import { createTestDatabase, type TestDatabase, type TestDatabaseKind } from './database.js';
import type { Database } from '../storage/database.js';

/** What a project's tests get from createTestLatchkey (@latchkey/core/testing): the public API, a clock and a mailer. */
export interface ProjectTestLatchkey extends Latchkey {
  clock: ManualClock;
  mailer: MemoryMailer;
  /** Closes everything and drops the test database. */
  destroy(): Promise<void>;
}

/** The same object, for the library's own tests: its internals typed too. */
export interface TestLatchkey extends ProjectTestLatchkey, InternalLatchkey {}

/** What createTestLatchkey builds: the database kind, the username type, settings and the project's own parts. */
export interface TestLatchkeyOptions {
  kind?: TestDatabaseKind;
  usernameType?: UsernameType;
  settings?: Partial<SettingValues>;
  /** Extra environment variables, read as a deployment would (NODE_ENV defaults to test). */
  env?: Record<string, string>;
  /** The project's template folders, searched first. */
  templateDirs?: readonly string[];
  /** The project's locale folders (createLatchkey's localeDirs), read before Latchkey's catalogs. */
  localeDirs?: readonly string[];
  /**
   * An open database migrated for these settings, instead of a new one: for a site restarted on
   * the same data. destroy() closes it and leaves its data to whoever made it.
   */
  database?: Database;
  /** The project's adapter, made from the settings. */
  adapter?: (settings: Settings) => AccountAdapter;
  /** The project's social account adapter, made from the settings. */
  socialAdapter?: (settings: Settings) => SocialAccountAdapter;
  /** Provider kinds of the project's own (createLatchkey's socialProviderKinds). */
  socialProviderKinds?: readonly ProviderKind[];
  /** Where Latchkey reports a service going away and coming back (createLatchkey's log). */
  log?: LatchkeyLog;
  /** The project's own migrations (createLatchkey's projectMigrations), applied to the test's database. */
  projectMigrations?: ProjectMigrations;
  /** The project's user fields (createLatchkey's userFields); projectMigrations must add their columns, as the project's do. */
  userFields?: UserFieldSet;
}

/**
 * What production requires (docs/production.md), for tests of a site under production settings:
 * a real secret key, its hosts, a hidden admin, a database and a mailer named. Password hashing
 * stays cheap, as everywhere in the tests.
 */
export const PRODUCTION_TEST_ENV: Readonly<Record<string, string>> = {
  NODE_ENV: 'production',
  LATCHKEY_SECRET_KEY: 'k'.repeat(50),
  LATCHKEY_ALLOWED_HOSTS: 'testserver',
  LATCHKEY_ADMIN_URL: 'admin/',
  DATABASE_URL: 'sqlite::memory:',
  EMAIL_URL: 'console://',
  LATCHKEY_ARGON2_MEMORY_COST: '64',
  LATCHKEY_ARGON2_TIME_COST: '1',
  LATCHKEY_ARGON2_PARALLELISM: '1',
};

/** The settings createTestLatchkey starts from: the test environment's, for a site at `testserver`, with `options` applied. */
export function testSettings(options: TestLatchkeyOptions = {}): Settings {
  const project: ProjectSettings = {
    USERNAME_TYPE: options.usernameType ?? 'username',
    SITE_NAME: 'Test Site',
    DOMAIN_NAME: 'testserver',
    ...(options.settings ? { base: options.settings } : {}),
  };
  return loadSettings(project, { env: { NODE_ENV: 'test', ...options.env }, cwd: process.cwd() });
}

/**
 * A complete Latchkey on a fresh database of its own, with a clock the test moves and a mailer
 * it reads: what every integration suite starts from.
 */
export async function createTestLatchkey(options: TestLatchkeyOptions = {}): Promise<TestLatchkey> {
  const settings = testSettings(options);
  const database = options.database ?? (await createTestDatabase(options.kind ?? 'sqlite', settings.USERNAME_TYPE, options.userFields ? { userFields: options.userFields } : {}));
  const clock = new ManualClock();
  const mailer = new MemoryMailer({ defaultFrom: settings.DEFAULT_FROM_EMAIL });
  const latchkey = await openLatchkey({
    settings,
    clock,
    mailer,
    database,
    // Latchkey's are applied already; the project's, when it has some, are applied now.
    migrations: options.projectMigrations ? 'auto' : 'require',
    ...(options.projectMigrations ? { projectMigrations: options.projectMigrations } : {}),
    ...(options.userFields ? { userFields: options.userFields } : {}),
    ...(options.templateDirs ? { templateDirs: options.templateDirs } : {}),
    ...(options.localeDirs ? { localeDirs: options.localeDirs } : {}),
    ...(options.adapter ? { adapter: options.adapter(settings) } : {}),
    ...(options.socialAdapter ? { socialAdapter: options.socialAdapter(settings) } : {}),
    ...(options.socialProviderKinds ? { socialProviderKinds: options.socialProviderKinds } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  return {
    ...latchkey,
    clock,
    mailer,
    async destroy() {
      await latchkey.close();
      if (options.database === undefined) await (database as TestDatabase).destroy();
    },
  };
}
