import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fastHashingOptions } from './fast-hashing-options.js';
import { HASHER_NAMES, READ_ONLY_HASHERS, type HasherName } from '../../config/choices.js';
import { createPasswordHashing, type PasswordHashing, type PasswordHashingOptions } from './password-hashing.js';
import { DJANGO_HASHING_DEFAULTS } from '../../config/defaults.js';

// Debian's interpreter, which has python3-django, python3-argon2 and python3-bcrypt; the python3
// on PATH may be another one without them.
const PYTHON = '/usr/bin/python3';
const CHECKER = fileURLToPath(new URL('../../../test/fixtures/django-passwords/check_passwords.py', import.meta.url));
const DJANGO_MISSING = 3; // check_passwords.py's exit status when an import fails

interface Case {
  password: string;
  encoded: string;
  expected: boolean;
}

function checkWithDjango(cases: Case[]): { status: number | null; stderr: string; results: { valid: boolean; hasher: string | null }[] } {
  const input = JSON.stringify(cases.map(({ password, encoded }) => ({ password, encoded })));
  const run = spawnSync(PYTHON, [CHECKER], { input, encoding: 'utf8' });
  const status = run.error ? DJANGO_MISSING : run.status;
  return { status, stderr: run.stderr ?? String(run.error), results: status === 0 ? (JSON.parse(run.stdout) as []) : [] };
}

/** Why Django cannot check hashes here, or null when it can. An empty list only imports Django. */
function djangoMissing(): string | null {
  const { status, stderr } = checkWithDjango([]);
  if (status !== DJANGO_MISSING) return null;
  return `${PYTHON} cannot import Django and its hashers (${stderr.trim()}); install python3-django python3-argon2 python3-bcrypt`;
}

const opened: PasswordHashing[] = [];
afterAll(() => Promise.all(opened.map((service) => service.close())));

async function casesFor(name: HasherName, options: PasswordHashingOptions): Promise<Case[]> {
  const service = createPasswordHashing({ ...options, hashers: [name] });
  opened.push(service);
  const passwords = ['correct horse battery staple', 'pässwörd-ÜNÏCODE', '密码パスワード🔑', 'x'.repeat(50) + '0123456789'.repeat(5)];
  const cases: Case[] = [];
  for (const password of passwords) {
    const encoded = await service.hash(password);
    cases.push({ password, encoded, expected: true }, { password: `${password}!`, encoded, expected: false });
  }
  return cases;
}

describe('hashes made by Latchkey', () => {
  it("verify in Django's check_password, for every hasher", async (context) => {
    const missing = djangoMissing();
    if (missing !== null) {
      // CI installs python3-django, so there a missing Django is a broken build, not a skip.
      if (process.env.CI) throw new Error(missing);
      console.warn(`Skipped the Django interop test: ${missing}.`);
      context.skip(missing);
    }

    const cases: Case[] = [];
    // Every hasher that writes hashes; the read-only ones (plain bcrypt) are checked against hashes
    // Django made, in django-bcrypt.test.ts.
    for (const name of HASHER_NAMES.filter((hasher) => !READ_ONLY_HASHERS.includes(hasher))) cases.push(...(await casesFor(name, fastHashingOptions())));
    // One argon2 hash at Django's own parameters, as production writes them.
    cases.push(...(await casesFor('argon2', { ...DJANGO_HASHING_DEFAULTS, concurrency: 2, maxQueued: 100, maxPasswordBytes: 4096 })).slice(0, 2));

    const { status, stderr, results } = checkWithDjango(cases);
    expect(status, stderr).toBe(0);
    expect(results.map((result) => result.valid)).toEqual(cases.map((testCase) => testCase.expected));
    expect(results.map((result) => result.hasher)).toEqual(cases.map((testCase) => testCase.encoded.split('$')[0]));
  });
});
