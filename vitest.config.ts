import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'e2e/**/*.test.ts'],
    // Suites that start servers or hash with real parameters need more than the default 5 s.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['./vitest.global-setup.ts'],
    reporters: ['default', './vitest.summary-reporter.ts'],
    env: { NODE_ENV: 'test' },
  },
});
