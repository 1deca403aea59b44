import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain line, "N passed, N failed, N skipped", that CI logs and people can
 * read without colour codes.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      // A file that fails before any of its tests runs (an import error, a failing hook) counts.
      if (module.errors().length > 0) counts.failed++;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else counts.skipped++;
      }
    }
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
