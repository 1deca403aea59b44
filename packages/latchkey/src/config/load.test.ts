import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSafeRedirect } from '../http/kit/safe-redirect.js';
import { loadSettings, type ProjectSettings } from './load.js';

const project: ProjectSettings = { USERNAME_TYPE: 'username', SITE_NAME: 'Acme', DOMAIN_NAME: 'acme.example' };
const productionEnv = {
  NODE_ENV: 'production',
  LATCHKEY_SECRET_KEY: 'x'.repeat(50),
  DATABASE_URL: 'postgres://app:pw@127.0.0.1:5432/app',
  EMAIL_URL: 'smtp://127.0.0.1:25',
  LATCHKEY_ADMIN_URL: 'staff-a8d2/',
};

function load(env: Record<string, string>, overrides: Partial<ProjectSettings> = {}) {
  return loadSettings({ ...project, ...overrides }, { env, cwd: mkdtempSync(join(tmpdir(), 'lk-settings-')) });
}

function loadError(env: Record<string, string>, overrides: Partial<ProjectSettings> = {}): string {
  try {
    load(env, overrides);
  } catch (error) {
    expect(error).toMatchObject({ code: 'configuration_invalid' });
    return (error as Error).message;
  }
  throw new Error('expected loadSettings to fail');
}

describe('defaults per environment', () => {
  it('local mode runs on SQLite with console email, optional verification and a kept secret key', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'lk-settings-'));
    const settings = loadSettings(project, { env: {}, cwd });
    expect(settings).toMatchObject({
      ENVIRONMENT: 'local',
      DATABASE_URL: 'sqlite:./db.sqlite3',
      EMAIL_URL: 'console:',
      ACCOUNT_EMAIL_VERIFICATION: 'optional',
      ACCOUNT_LOGIN_METHODS: ['username'],
      ADMIN_URL: 'admin/',
      HOST: '127.0.0.1',
      PORT: 8000,
      SESSION_COOKIE_SECURE: false,
    });
    const keyFile = join(cwd, '.latchkey', 'secret-key');
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(settings.SECRET_KEY);
    expect(statSync(keyFile).mode & 0o077).toBe(0);
    expect(loadSettings(project, { env: {}, cwd }).SECRET_KEY).toBe(settings.SECRET_KEY);
  });

  it('test mode uses an in-memory database and the memory mailer', () => {
    expect(load({ NODE_ENV: 'test' })).toMatchObject({ ENVIRONMENT: 'test', DATABASE_URL: 'sqlite::memory:', EMAIL_URL: 'memory:' });
  });

  it('production refuses to start without its four variables, naming every missing one', () => {
    expect(loadError({ NODE_ENV: 'production' })).toBe(
      'Production needs these environment variables: LATCHKEY_SECRET_KEY, DATABASE_URL, EMAIL_URL, LATCHKEY_ADMIN_URL.',
    );
    const { DATABASE_URL: _omitted, ...withoutDatabase } = productionEnv;
    expect(loadError(withoutDatabase)).toBe('Production needs these environment variables: DATABASE_URL.');
  });

  it('production has mandatory verification, secure cookies and the domain as allowed host', () => {
    expect(load(productionEnv)).toMatchObject({
      ENVIRONMENT: 'production',
      ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
      SESSION_COOKIE_SECURE: true,
      CSRF_COOKIE_SECURE: true,
      SESSION_COOKIE_NAME: '__Host-sessionid',
      ALLOWED_HOSTS: ['acme.example'],
      SITE_URL: 'https://acme.example',
      ADMIN_URL: 'staff-a8d2/',
      HOST: '0.0.0.0',
      ARGON2_MEMORY_COST: 102400,
      ARGON2_TIME_COST: 2,
      ARGON2_PARALLELISM: 8,
      PBKDF2_ITERATIONS: 1_500_000,
      BCRYPT_ROUNDS: 12,
    });
  });

  it('derives ACCOUNT_LOGIN_METHODS from the username type', () => {
    expect(load({}, { USERNAME_TYPE: 'email' }).ACCOUNT_LOGIN_METHODS).toEqual(['email']);
  });
});

describe("local mode's SITE_URL", () => {
  it('follows PORT, so that mailed links and provider callbacks reach the server on whatever port it runs', () => {
    expect(load({}).SITE_URL).toBe('http://localhost:8000');
    expect(load({ PORT: '19080' }).SITE_URL).toBe('http://localhost:19080');
    expect(load({ PORT: '19080', HOST: '0.0.0.0' }).SITE_URL).toBe('http://localhost:19080');
    // Any free port: not known until the server listens, so the default stays.
    expect(load({ PORT: '0' }).SITE_URL).toBe('http://localhost:8000');
  });

  it('names HOST when it is one machine, and lets requests for it in', () => {
    const settings = load({ PORT: '19080', HOST: 'devbox.internal' });
    expect(settings.SITE_URL).toBe('http://devbox.internal:19080');
    expect(settings.ALLOWED_HOSTS).toContain('devbox.internal');
  });

  it('stays as the project or the environment sets it', () => {
    expect(load({ PORT: '19080', LATCHKEY_SITE_URL: 'https://dev.acme.example' }).SITE_URL).toBe('https://dev.acme.example');
    expect(load({ PORT: '19080' }, { local: { SITE_URL: 'http://acme.localhost:3000' } }).SITE_URL).toBe('http://acme.localhost:3000');
    expect(load({ PORT: '19080', HOST: 'devbox.internal', LATCHKEY_ALLOWED_HOSTS: 'localhost' }).ALLOWED_HOSTS).toEqual(['localhost']);
  });
});

describe('environment overrides', () => {
  it('reads booleans, enums, lists, numbers and JSON', () => {
    const settings = load({
      LATCHKEY_ACCOUNT_ALLOW_REGISTRATION: 'false',
      LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'none',
      LATCHKEY_ALLOWED_HOSTS: 'a.example, b.example',
      PORT: '9000',
      LATCHKEY_ACCOUNT_RATE_LIMITS: 'false',
      LATCHKEY_SOCIALACCOUNT_PROVIDERS: '{"openid_connect":{"APPS":[{"provider_id":"corp"}]}}',
      LATCHKEY_ADMIN_FORCE_ALLAUTH: 'true',
    });
    expect(settings).toMatchObject({
      ACCOUNT_ALLOW_REGISTRATION: false,
      ACCOUNT_EMAIL_VERIFICATION: 'none',
      ALLOWED_HOSTS: ['a.example', 'b.example'],
      PORT: 9000,
      ACCOUNT_RATE_LIMITS: false,
      SOCIALACCOUNT_PROVIDERS: { openid_connect: { APPS: [{ provider_id: 'corp' }] } },
      ADMIN_FORCE_ALLAUTH: true,
    });
  });

  it('stops on a bad value with one line naming the variable, the value and what is allowed', () => {
    expect(loadError({ LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'sometimes' })).toBe(
      'LATCHKEY_ACCOUNT_EMAIL_VERIFICATION="sometimes" is not allowed: use one of mandatory, optional, none.',
    );
    expect(loadError({ LATCHKEY_ACCOUNT_ALLOW_REGISTRATION: 'yes' })).toBe(
      'LATCHKEY_ACCOUNT_ALLOW_REGISTRATION="yes" is not allowed: use true or false.',
    );
    expect(loadError({ PORT: 'eighty' })).toBe('PORT="eighty" is not allowed: use a whole number from 0 to 65535.');
    expect(loadError({ LATCHKEY_SOCIALACCOUNT_PROVIDERS: '{not json' })).toContain('LATCHKEY_SOCIALACCOUNT_PROVIDERS=<hidden> is not allowed');
    expect(loadError({ LATCHKEY_CSRF_TRUSTED_ORIGINS: 'https://app.exa^mple.com' })).toContain('LATCHKEY_CSRF_TRUSTED_ORIGINS=');
    expect(loadError({ LATCHKEY_CSRF_TRUSTED_ORIGINS: 'https://app.example.com/path' })).toContain('LATCHKEY_CSRF_TRUSTED_ORIGINS=');
    expect(loadError({ LATCHKEY_ACCOUNT_RATE_LIMITS: '{"login":"lots"}' })).toContain('LATCHKEY_ACCOUNT_RATE_LIMITS=');
    expect(loadError({ LATCHKEY_ADMIN_URL: '/admin' })).toContain('LATCHKEY_ADMIN_URL="/admin" is not allowed');
  });

  it('takes URL_PREFIX empty or as /segments, ASCII, without a trailing slash', () => {
    expect(load({}).URL_PREFIX).toBe('');
    expect(load({ LATCHKEY_URL_PREFIX: '/auth' }).URL_PREFIX).toBe('/auth');
    expect(load({ LATCHKEY_URL_PREFIX: '/id/v2.accounts' }).URL_PREFIX).toBe('/id/v2.accounts');
    for (const value of ['auth', '/auth/', '/', '//auth', '/auth//x', '/caf\u00e9', '/a b', '/..', '/./x', '/auth?x', 'https://example.com/auth']) {
      expect(loadError({ LATCHKEY_URL_PREFIX: value })).toContain('LATCHKEY_URL_PREFIX=');
    }
  });

  it('checks service URLs and hashing parameters at start-up, in the same one-line form', () => {
    expect(loadError({ DATABASE_URL: 'mysql://root:pw@127.0.0.1/app' })).toBe(
      'DATABASE_URL="mysql://root:***@127.0.0.1/app" is not allowed: use sqlite:PATH, sqlite::memory: or postgres://user:pass@host:port/db.',
    );
    expect(loadError({ EMAIL_URL: 'smtp://u:pw@host:25?insecure=1' })).toContain('EMAIL_URL="smtp://u:***@host:25?insecure=1" is not allowed: use smtp://');
    expect(loadError({ LATCHKEY_PASSWORD_HASHERS: 'argon2,argon2' })).toContain('LATCHKEY_PASSWORD_HASHERS="argon2,argon2" is not allowed');
    expect(loadError({ LATCHKEY_ARGON2_MEMORY_COST: '16', LATCHKEY_ARGON2_PARALLELISM: '4' })).toBe(
      'LATCHKEY_ARGON2_MEMORY_COST=16 is not allowed: use at least 8 × ARGON2_PARALLELISM (32).',
    );
  });

  it('merges rate limits with the defaults, as allauth does', () => {
    const settings = load({ LATCHKEY_ACCOUNT_RATE_LIMITS: '{"login_failed":"3/m/key"}' });
    expect(settings.ACCOUNT_RATE_LIMITS).toMatchObject({ login_failed: '3/m/key', signup: '20/m/ip' });
  });

  it('never prints a password or the secret key in an error', () => {
    const message = loadError({ REDIS_URL: 'http://user:hunter2@127.0.0.1:6379' });
    expect(message).not.toContain('hunter2');
    expect(message).toContain('REDIS_URL="http://user:***@127.0.0.1:6379" is not allowed');
    expect(loadError({ DATABASE_URL: 'mysql://db/app?password=hunter2' })).not.toContain('hunter2');
    expect(loadError({ LATCHKEY_SOCIALACCOUNT_PROVIDERS: '{"openid_connect":{"APPS":[{"secret":"hunter2"}]}' })).not.toContain('hunter2');
    expect(loadError({ LATCHKEY_SECRET_KEY: '' })).not.toContain('hunter2');
  });

  it('refuses USERNAME_TYPE from the environment: it is fixed in the project file', () => {
    expect(loadError({ LATCHKEY_USERNAME_TYPE: 'email' })).toContain('LATCHKEY_USERNAME_TYPE cannot be set from the environment');
  });

  it('refuses an unknown LATCHKEY_ variable instead of ignoring a typo', () => {
    expect(loadError({ LATCHKEY_ACOUNT_ALLOW_REGISTRATION: 'false' })).toBe(
      'LATCHKEY_ACOUNT_ALLOW_REGISTRATION is not a Latchkey setting; node_modules/@latchkey/core/docs/settings.md lists the settings and their variables.',
    );
    expect(() => load({ LATCHKEY_SUPERUSER_PASSWORD: 'x' })).not.toThrow();
  });
});

describe("the project's own settings", () => {
  it('applies base, then the environment, then environment variables', () => {
    const settings = load(
      { NODE_ENV: 'test', LATCHKEY_SITE_NAME: 'From env' },
      { base: { SITE_NAME: 'Base', ACCOUNT_ALLOW_REGISTRATION: false }, test: { SITE_NAME: 'Test', PORT: 1234 } },
    );
    expect(settings).toMatchObject({ SITE_NAME: 'From env', ACCOUNT_ALLOW_REGISTRATION: false, PORT: 1234 });
  });

  it('checks project values too', () => {
    expect(loadError({}, { base: { ACCOUNT_EMAIL_VERIFICATION: 'always' as never } })).toBe(
      'Setting ACCOUNT_EMAIL_VERIFICATION="always" in the project\'s settings is not allowed: use one of mandatory, optional, none.',
    );
    expect(loadError({}, { USERNAME_TYPE: 'phone' as never })).toContain('USERNAME_TYPE="phone"');
  });

  it('refuses username login for a project whose users have no username', () => {
    expect(loadError({ LATCHKEY_ACCOUNT_LOGIN_METHODS: 'email,username' }, { USERNAME_TYPE: 'email' })).toContain(
      'ACCOUNT_LOGIN_METHODS cannot include username',
    );
  });
});

describe('the headless settings', () => {
  const frontEnd = JSON.stringify({
    account_confirm_email: 'https://app.example.com/verify-email/{key}',
    account_reset_password_from_key: 'https://app.example.com/password/reset/{key}',
  });

  it('reads the front-end URLs as JSON and the CORS origins as a list; the specification is served in local mode only', () => {
    const settings = load({ LATCHKEY_HEADLESS_FRONTEND_URLS: frontEnd, LATCHKEY_CORS_ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:5173' });
    expect(settings.HEADLESS_FRONTEND_URLS).toEqual(JSON.parse(frontEnd));
    expect(settings.CORS_ALLOWED_ORIGINS).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(settings).toMatchObject({ HEADLESS_ONLY: false, HEADLESS_SERVE_SPECIFICATION: true });
    expect(load(productionEnv)).toMatchObject({ HEADLESS_ONLY: false, HEADLESS_SERVE_SPECIFICATION: false, HEADLESS_FRONTEND_URLS: {}, CORS_ALLOWED_ORIGINS: [] });
  });

  it('refuses HEADLESS_ONLY unless the front end names where confirmation and reset links go', () => {
    expect(loadError({ LATCHKEY_HEADLESS_ONLY: 'true' })).toBe(
      'LATCHKEY_HEADLESS_ONLY=true needs LATCHKEY_HEADLESS_FRONTEND_URLS to name account_confirm_email and account_reset_password_from_key: without the account pages, emails would link to pages that do not exist.',
    );
    expect(loadError({ LATCHKEY_HEADLESS_ONLY: 'true', LATCHKEY_HEADLESS_FRONTEND_URLS: '{"account_confirm_email":"https://app.example.com/verify/{key}"}' })).toContain(
      'to name account_reset_password_from_key:',
    );
    expect(loadError({}, { base: { HEADLESS_ONLY: true } })).toContain('LATCHKEY_HEADLESS_ONLY=true needs LATCHKEY_HEADLESS_FRONTEND_URLS');
    expect(load({ LATCHKEY_HEADLESS_ONLY: 'true', LATCHKEY_HEADLESS_FRONTEND_URLS: frontEnd }).HEADLESS_ONLY).toBe(true);
  });

  it('refuses a confirmation or reset URL without {key}, and anything but absolute http(s) URLs', () => {
    expect(loadError({ LATCHKEY_HEADLESS_FRONTEND_URLS: '{"account_reset_password_from_key":"https://app.example.com/reset"}' })).toBe(
      'LATCHKEY_HEADLESS_FRONTEND_URLS: the account_reset_password_from_key URL "https://app.example.com/reset" has no {key}: write {key} where the mailed key goes.',
    );
    expect(loadError({ LATCHKEY_HEADLESS_FRONTEND_URLS: '{"account_signup":"/signup"}' })).toContain('LATCHKEY_HEADLESS_FRONTEND_URLS=');
    expect(loadError({ LATCHKEY_HEADLESS_FRONTEND_URLS: '{"account_login":"https://app.example.com/"}' })).toContain('LATCHKEY_HEADLESS_FRONTEND_URLS=');
    expect(loadError({ LATCHKEY_CORS_ALLOWED_ORIGINS: 'https://app.example.com/' })).toContain('LATCHKEY_CORS_ALLOWED_ORIGINS=');
    expect(loadError({ LATCHKEY_CORS_ALLOWED_ORIGINS: '*' })).toContain('LATCHKEY_CORS_ALLOWED_ORIGINS=');
  });
});

describe('the redirect settings', () => {
  it("default to the home page, like allauth's", () => {
    expect(load({})).toMatchObject({ LOGIN_REDIRECT_URL: '/', LOGOUT_REDIRECT_URL: '/' });
    expect(load(productionEnv)).toMatchObject({ LOGIN_REDIRECT_URL: '/', LOGOUT_REDIRECT_URL: '/' });
  });

  it('accept a path on this site, from the environment or the project file', () => {
    expect(load({ LATCHKEY_LOGIN_REDIRECT_URL: '/users/~redirect/', LATCHKEY_LOGOUT_REDIRECT_URL: '/accounts/login/?from=logout' })).toMatchObject({
      LOGIN_REDIRECT_URL: '/users/~redirect/',
      LOGOUT_REDIRECT_URL: '/accounts/login/?from=logout',
    });
    expect(load({}, { base: { LOGIN_REDIRECT_URL: '/users/~redirect/', LOGOUT_REDIRECT_URL: '/bye/' } })).toMatchObject({
      LOGIN_REDIRECT_URL: '/users/~redirect/',
      LOGOUT_REDIRECT_URL: '/bye/',
    });
  });

  it('refuse anything a browser could follow to another site, relative paths, and characters a Location header cannot carry, in one line', () => {
    const allowed = 'use a path on this site starting with one slash, in ASCII (percent-encode other characters), e.g. / or /users/~redirect/.';
    expect(loadError({ LATCHKEY_LOGIN_REDIRECT_URL: 'https://evil.example/' })).toBe(`LATCHKEY_LOGIN_REDIRECT_URL="https://evil.example/" is not allowed: ${allowed}`);
    expect(loadError({ LATCHKEY_LOGIN_REDIRECT_URL: '//evil.example/' })).toBe(`LATCHKEY_LOGIN_REDIRECT_URL="//evil.example/" is not allowed: ${allowed}`);
    expect(loadError({ LATCHKEY_LOGIN_REDIRECT_URL: 'relative' })).toBe(`LATCHKEY_LOGIN_REDIRECT_URL="relative" is not allowed: ${allowed}`);
    for (const value of ['https://evil.example/', '//evil.example/', 'relative', '/\\evil.example/', '/\t/evil.example', ' /home/', '/%2f/evil.example', '', 'javascript:alert(1)', '/\u3002x', '/café/']) {
      expect(loadError({ LATCHKEY_LOGIN_REDIRECT_URL: value })).toContain('LATCHKEY_LOGIN_REDIRECT_URL=');
      expect(loadError({ LATCHKEY_LOGOUT_REDIRECT_URL: value })).toContain('LATCHKEY_LOGOUT_REDIRECT_URL=');
    }
    expect(loadError({}, { base: { LOGOUT_REDIRECT_URL: '//evil.example/' } })).toBe(
      'Setting LOGOUT_REDIRECT_URL="//evil.example/" in the project\'s settings is not allowed: use a path on this site starting with one slash, in ASCII (percent-encode other characters), e.g. / or /accounts/login/.',
    );
  });

  it('accept only values that a next parameter could also be, so the fallback is never less safe than next', () => {
    const candidates = ['/', '/users/~redirect/', '/a?b=c#d', '//x', '/\\x', '/\tx', '/%2Fx', '/%5cx', 'x', 'http://x/', '/ x', '/\u00a0x', '/\u2028x'];
    const accepted = candidates.filter((value) => {
      try {
        load({ LATCHKEY_LOGIN_REDIRECT_URL: value });
        return true;
      } catch {
        return false;
      }
    });
    expect(accepted).toEqual(['/', '/users/~redirect/', '/a?b=c#d']);
    for (const value of accepted) expect(isSafeRedirect(value)).toBe(true);
  });
});
