/**
 * docs/settings.md's "Every setting" tables against the code: the page holds what
 * `npm run docs:settings` writes from the declarations, every setting is declared (and so
 * documented) exactly once, and each Default the tables show is what loadSettings gives.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE_DEFAULTS } from '../src/config/defaults.js';
import { loadSettings, type ProjectSettings } from '../src/config/load.js';
import { VALUE, type Environment, type SettingDeclaration } from '../src/config/settings/declaration.js';
import { defaultTemplateIn, defaultTextIn, DOCUMENTED_ENVIRONMENTS, formatDefault, withSettingsTables } from '../src/config/settings/docs.js';
import { SETTING_DECLARATIONS, SETTING_GROUPS } from '../src/config/settings/index.js';
import { envNameOf, PASSWORD_VALIDATOR_NAMES, SETTING_FIELDS, type SettingName, type Settings } from '../src/config/settings.js';

const pagePath = new URL('../../../docs/settings.md', import.meta.url);
const page = readFileSync(pagePath, 'utf8');

const declarations = Object.entries(SETTING_DECLARATIONS) as [SettingName, SettingDeclaration<unknown>][];

describe('docs/settings.md', () => {
  it('has the tables the declarations give', () => {
    expect(page, 'docs/settings.md is not what the settings declarations give: run `npm run docs:settings`').toBe(withSettingsTables(page));
  });

  it('documents every setting in exactly one row of "Every setting"', () => {
    const everySetting = page.slice(page.indexOf('\n## Every setting\n'));
    for (const [name] of declarations) {
      expect(everySetting.split(`\n| \`${name}\` |`).length - 1, name).toBe(1);
    }
  });
});

describe('the declarations', () => {
  it('declare every setting exactly once, in one group', () => {
    const declared = SETTING_GROUPS.flatMap((group) => Object.keys(group.settings));
    expect(declared.filter((name, index) => declared.indexOf(name) !== index)).toEqual([]);
    expect([...declared].sort()).toEqual(Object.keys(SETTING_FIELDS).sort());
    const ids = SETTING_GROUPS.map((group) => group.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const group of SETTING_GROUPS) {
      for (const entry of group.projectFileEntries ?? []) expect(declared, `${entry.name} is a setting, not a project-file entry`).not.toContain(entry.name);
    }
  });

  it('give each setting its Allowed text and its doc line, each one line of a table cell', () => {
    for (const [name, { docs }] of declarations) {
      for (const text of [docs.allowed, docs.does]) {
        expect(text.trim(), name).not.toBe('');
        expect(text, name).not.toMatch(/\n| \| /);
      }
    }
  });

  it('leave out of BASE_DEFAULTS exactly the settings its type leaves out', () => {
    const without = ['SECRET_KEY', 'ALLOWED_HOSTS', 'DATABASE_URL', 'EMAIL_URL', 'ADMIN_URL', 'SITE_URL', 'SITE_NAME', 'ACCOUNT_LOGIN_METHODS', 'ACCOUNT_SIGNUP_FIELDS'];
    expect(Object.keys(BASE_DEFAULTS).sort()).toEqual(Object.keys(SETTING_FIELDS).filter((name) => !without.includes(name)).sort());
  });
});

describe('the Default column', () => {
  const project: ProjectSettings = { USERNAME_TYPE: 'username', SITE_NAME: 'Example', DOMAIN_NAME: 'example.com' };
  const productionVariables: Record<string, string> = {
    LATCHKEY_SECRET_KEY: 'x'.repeat(50),
    DATABASE_URL: 'postgres://app:pw@127.0.0.1:5432/app',
    EMAIL_URL: 'smtp://127.0.0.1:25',
    LATCHKEY_ADMIN_URL: 'staff-a8d2/',
  };
  const envOf: Record<Environment, Record<string, string>> = {
    local: { NODE_ENV: 'development' },
    test: { NODE_ENV: 'test' },
    production: { NODE_ENV: 'production', ...productionVariables },
  };
  const cwd = mkdtempSync(join(tmpdir(), 'lk-settings-docs-'));
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));
  const load = (env: Record<string, string>): Settings => loadSettings(project, { env, cwd });

  const rateLimitsOnThePage = /The default is:\n\n```json\n([^`]*)```/.exec(page)?.[1];

  /**
   * What each default that the tables describe in words (instead of showing its value) means,
   * held to the value loadSettings gives. A new such text needs its meaning here.
   */
  const described: Partial<Record<SettingName, (value: unknown, environment: Environment) => void>> = {
    SECRET_KEY: (value, environment) => {
      if (environment === 'local') expect(value).toBe(readFileSync(join(cwd, '.latchkey', 'secret-key'), 'utf8').trim());
      else expect(load(envOf.test).SECRET_KEY).not.toBe(value);
    },
    SITE_NAME: (value) => expect(value).toBe(project.SITE_NAME),
    SITE_URL: (value, environment) => {
      // Local mode follows PORT (8000 unless set); production is DOMAIN_NAME's https address.
      if (environment === 'local') expect(value).toBe('http://localhost:8000');
      else expect(value).toBe(`https://${project.DOMAIN_NAME}`);
    },
    URL_PREFIX: (value) => expect(value).toBe(''),
    ALLOWED_HOSTS: (value) => expect(value).toEqual([project.DOMAIN_NAME]),
    REDIS_URL: (value) => expect(value).toBeNull(),
    ACCOUNT_LOGIN_METHODS: (value) => expect(value).toEqual([project.USERNAME_TYPE]),
    ACCOUNT_SIGNUP_FIELDS: (value) => expect(value).toEqual(project.USERNAME_TYPE === 'username' ? ['email*', 'username*', 'password1*', 'password2*'] : ['email*', 'password1*', 'password2*']),
    ACCOUNT_EMAIL_SUBJECT_PREFIX: (value) => expect(value).toBeNull(),
    ACCOUNT_RATE_LIMITS: (value) => expect(value).toEqual(JSON.parse(rateLimitsOnThePage ?? 'null')),
    PASSWORD_HASHING_CONCURRENCY: (value) => expect(value).toBe(Math.min(availableParallelism(), 3)),
    AUTH_PASSWORD_VALIDATORS: (value) => expect(value).toEqual([...PASSWORD_VALIDATOR_NAMES]),
    MFA_WEBAUTHN_RP_ID: (value) => expect(value).toBeNull(),
  };

  it.each(DOCUMENTED_ENVIRONMENTS)('says what loadSettings gives in %s', (environment) => {
    const settings = load(envOf[environment]);
    for (const [name, declaration] of declarations) {
      const text = defaultTextIn(name, declaration, environment);
      const template = defaultTemplateIn(declaration, environment);
      if (text === '**required**') {
        // Required: production refuses to start without the variable.
        expect(environment, name).toBe('production');
        const { [envNameOf(name)]: _given, ...without } = envOf.production;
        expect(() => load(without), name).toThrow(`Production needs these environment variables: ${envNameOf(name)}.`);
      } else if (template.includes(VALUE)) {
        expect(text, `${name} in ${environment}`).toBe(template.replace(VALUE, formatDefault(settings[name])));
      } else {
        const check = described[name];
        expect(check, `${name}'s default in ${environment} is described ("${text}"): say what it means in this test`).toBeDefined();
        check?.(settings[name], environment);
      }
    }
  });

  it('has a meaning here only for defaults the tables describe', () => {
    const describedSomewhere = declarations.filter(([, declaration]) =>
      DOCUMENTED_ENVIRONMENTS.some((environment) => !defaultTemplateIn(declaration, environment).includes(VALUE)),
    );
    expect(describedSomewhere.map(([name]) => name).sort()).toEqual(Object.keys(described).sort());
  });
});
