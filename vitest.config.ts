import { defineConfig } from 'vitest/config';

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
    env: { NODE_ENV: 'test' },
  },
});
