import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../config/load.js';
import { findDeploymentProblems } from './check.js';

/** Production settings done right, plus the given variables. */
function production(env: Record<string, string> = {}) {
  return loadSettings(
    { USERNAME_TYPE: 'username', SITE_NAME: 'Acme', DOMAIN_NAME: 'acme.example' },
    {
      cwd: mkdtempSync(join(tmpdir(), 'lk-check-')),
      env: {
        NODE_ENV: 'production',
        LATCHKEY_SECRET_KEY: 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP',
        DATABASE_URL: 'postgres://app:pw@127.0.0.1:5432/app',
        EMAIL_URL: 'smtp://127.0.0.1:25',
        LATCHKEY_ADMIN_URL: 'staff-a8d2/',
        DEFAULT_FROM_EMAIL: 'Acme <noreply@acme.example>',
        ...env,
      },
    },
  );
}

const ids = (env?: Record<string, string>) => findDeploymentProblems(production(env)).map((problem) => problem.id);

describe('check --deploy: the headless settings', () => {
  const keyed = { account_confirm_email: 'https://app.acme.example/verify/{key}', account_reset_password_from_key: 'https://app.acme.example/reset/{key}' };

  it('finds nothing wrong by default or with HTTPS front ends that name every route', () => {
    expect(ids()).toEqual([]);
    const complete = { ...keyed, account_reset_password: 'https://app.acme.example/reset', account_signup: 'https://app.acme.example/signup' };
    expect(ids({ LATCHKEY_HEADLESS_ONLY: 'true', LATCHKEY_HEADLESS_FRONTEND_URLS: JSON.stringify(complete), LATCHKEY_CORS_ALLOWED_ORIGINS: 'https://app.acme.example' })).toEqual([]);
  });

  it('warns when HEADLESS_ONLY leaves the notices linking to pages that do not exist (W013)', () => {
    const [problem] = findDeploymentProblems(production({ LATCHKEY_HEADLESS_ONLY: 'true', LATCHKEY_HEADLESS_FRONTEND_URLS: JSON.stringify(keyed) }));
    expect(problem).toMatchObject({ id: 'latchkey.W013' });
    expect(problem?.message).toContain('names no account_reset_password or account_signup');
    // With the pages on, those links have somewhere to go.
    expect(ids({ LATCHKEY_HEADLESS_FRONTEND_URLS: JSON.stringify(keyed) })).toEqual([]);
  });

  it('warns about front ends reached over plain HTTP (W014)', () => {
    const problems = findDeploymentProblems(production({ LATCHKEY_CORS_ALLOWED_ORIGINS: 'http://app.acme.example', LATCHKEY_HEADLESS_FRONTEND_URLS: '{"account_signup":"http://app.acme.example/signup"}' }));
    expect(problems.map((problem) => problem.id)).toEqual(['latchkey.W014']);
    expect(problems[0]?.message).toContain('http://app.acme.example, http://app.acme.example/signup');
  });
});

describe('check --deploy: HSTS', () => {
  it('is quiet with the production default and warns when Strict-Transport-Security is switched off (W015)', () => {
    expect(production().SECURE_HSTS_SECONDS).toBe(31_536_000);
    expect(ids({ LATCHKEY_SECURE_HSTS_SECONDS: '0' })).toEqual(['latchkey.W015']);
  });
});

describe('check --deploy: placeholders', () => {
  it("names every setting that still points at example.com, as a --yes project's answers leave them (W016)", () => {
    const generatedWithYes = { LATCHKEY_SITE_URL: 'https://example.com', LATCHKEY_ALLOWED_HOSTS: 'example.com,www.example.com', DEFAULT_FROM_EMAIL: 'noreply@example.com' };
    const [problem, ...others] = findDeploymentProblems(production(generatedWithYes));
    expect(others).toEqual([]);
    expect(problem).toMatchObject({ id: 'latchkey.W016' });
    expect(problem?.message).toMatch(/^SITE_URL, ALLOWED_HOSTS, DEFAULT_FROM_EMAIL still name example\.com/);
  });

  it('is quiet about domains that only contain the word (myexample.com, example.company)', () => {
    expect(ids({ LATCHKEY_SITE_URL: 'https://myexample.com', LATCHKEY_ALLOWED_HOSTS: 'example.company', DEFAULT_FROM_EMAIL: 'noreply@myexample.com' })).toEqual([]);
  });
});
