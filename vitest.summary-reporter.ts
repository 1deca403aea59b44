import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with the slowest test files (so that CI's time budget is watched where it goes) and
 * one plain line, "N passed, N failed, N skipped", that CI logs and people can read without colour
 * codes.
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
    const slowest = [...testModules]
      .map((module) => ({ file: module.relativeModuleId, seconds: module.diagnostic().duration / 1000 }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, 15);
    process.stdout.write(`\nslowest test files:\n${slowest.map(({ file, seconds }) => `  ${seconds.toFixed(1).padStart(7)} s  ${file}`).join('\n')}\n`);
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
