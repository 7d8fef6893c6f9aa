/**
 * A vitest reporter that ends the run with one plain line of counts,
 * `tests: N passed, N failed, N skipped`, beside the default reporter's
 * coloured summary: CI reads a run's closing line to tell whether tests ran,
 * and vitest's own summary is not in a form it knows.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>): void {
    const n = { passed: 0, failed: 0, skipped: 0 };
    for (const m of modules)
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') n.passed++;
        else if (state === 'failed') n.failed++;
        else n.skipped++;
      }
    // A file that failed to load, or an error outside any test, fails the run too.
    const broken = modules.filter((m) => m.state() === 'failed' && !m.children.size).length;
    const failed = n.failed + broken + errors.length;
    process.stdout.write(`tests: ${n.passed} passed, ${failed} failed, ${n.skipped} skipped\n`);
  }
}
