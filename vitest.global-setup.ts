import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dropPooledSchemas } from './packages/latchkey/src/testing/postgres-schema-pool.js';

/**
 * The examples, the generated projects and the end-to-end journeys run the library as a project
 * installs it, from its build in packages/latchkey/dist: brought up to date here, before any suite
 * runs (a no-op when nothing changed), so that a suite never runs an older build.
 */
function buildLibrary(): void {
  execFileSync(process.execPath, ['packages/latchkey/scripts/build.js'], { stdio: 'inherit' });
}

/**
 * Runs once before the suite. Parts that need a service this machine may lack say so here, in one
 * line each, instead of passing silently; under CI (CI=true) a missing part fails the run, since
 * .ci/run is meant to switch every part on.
 */
function announceLeftOutParts(): void {
  const leftOut: string[] = [];
  if (!process.env.TEST_DATABASE_URL) {
    leftOut.push('PostgreSQL: storage and integration suites run on SQLite only, and the two-instance test (e2e/two-instances.test.ts) does not run (set TEST_DATABASE_URL=postgres://... to add PostgreSQL).');
  }
  const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(chromium)) {
    leftOut.push(`Chromium: the browser journeys in e2e/ do not run (apt-get install chromium, or set CHROMIUM_PATH; looked at ${chromium}).`);
  }
  if (!process.env.REDIS_URL) {
    leftOut.push('Redis: rate-limit counters and one-time-code replay guards are tested on the databases only, and the two-instance test (e2e/two-instances.test.ts) does not run (set REDIS_URL=redis://127.0.0.1:6379/0 to add Redis).');
  }
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import django, argon2, bcrypt, allauth, rest_framework, psycopg2'], { stdio: 'ignore' });
  } catch {
    leftOut.push(
      'Django: our hashes are not cross-checked in Django, and import-django is not tried on a real Django project (apt-get install python3-django python3-django-allauth python3-djangorestframework python3-argon2 python3-bcrypt python3-psycopg2).',
    );
  }
  if (leftOut.length === 0) return;
  if (process.env.CI) throw new Error(`CI must run every part of the suite, but these are left out:\n${leftOut.join('\n')}`);
  for (const line of leftOut) console.log(`left out: ${line}`);
}

export default function setup(): () => Promise<void> {
  buildLibrary();
  announceLeftOutParts();
  // The PostgreSQL schemas the tests left free for each other (testing/postgres-schema-pool.ts).
  return async () => {
    const url = process.env.TEST_DATABASE_URL;
    if (url) await dropPooledSchemas(url);
  };
}
