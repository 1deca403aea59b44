import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The slowest files of the last CI run (the summary reporter's "slowest test files", in seconds).
 * CI runs on a clean checkout, without vitest's cache of durations, where vitest orders files by
 * size: these, mostly short files that start processes, then started late and could leave one
 * worker running them alone while the other had nothing left. Started first, longest first, they
 * overlap with everything else. Update the list from the summary when it changes much.
 */
const SECONDS_IN_LAST_CI: Readonly<Record<string, number>> = {
  'packages/create-latchkey/test/generated-projects.test.ts': 221,
  'packages/create-latchkey/test/packed.test.ts': 184,
  'e2e/admin.test.ts': 109,
  'packages/latchkey/src/http/journeys.test.ts': 109,
  'e2e/admin-pages.test.ts': 100,
  'e2e/social-sign-in.test.ts': 80,
  'packages/latchkey/src/storage/conformance.test.ts': 79,
  'e2e/admin-access-pages.test.ts': 72,
  'e2e/passkeys.test.ts': 69,
  'e2e/mfa.test.ts': 62,
  'e2e/login-logout.test.ts': 61,
  'e2e/saml-sign-in.test.ts': 58,
};

/** The listed files first, longest first; then the others in vitest's own order. */
class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const seconds = (file: TestSpecification) => SECONDS_IN_LAST_CI[relative(file.project.config.root, file.moduleId)] ?? 0;
    return [...sorted].sort((a, b) => seconds(b) - seconds(a));
  }
}

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'e2e/**/*.test.ts'],
    // Suites that start servers or hash with real parameters need more than the default 5 s.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker per core but one; on our two-core machines that is a single
    // file at a time, while much of the suite waits on PostgreSQL, Chromium, child processes and
    // the hashing threads. Two files at a time use the machine.
    maxWorkers: 2,
    globalSetup: ['./vitest.global-setup.ts'],
    reporters: ['default', './vitest.summary-reporter.ts'],
    sequence: { sequencer: SlowestFirstSequencer },
    env: { NODE_ENV: 'test' },
  },
});
