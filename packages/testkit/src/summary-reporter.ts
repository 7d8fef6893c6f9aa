/**
 * A vitest reporter that ends the run with one plain line of counts,
 * `tests: N passed, N failed, N skipped`, beside the default reporter's
 * coloured summary: CI reads a run's closing line to tell whether tests ran,
 * and vitest's own summary is not in a form it knows.
 */
import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/** One test file's outcome and counts (a file that failed outside its tests counts one failure). */
export interface FileOutcome {
  file: string;
  failed: boolean;
  counts: { passed: number; failed: number; skipped: number };
}

/** Each file's outcome; `errors` outside any file (unhandled) are reported as `file: ''`. */
export function fileOutcomes(modules: ReadonlyArray<TestModule>, errors: number): FileOutcome[] {
  const out: FileOutcome[] = modules.map((m) => {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const t of m.children.allTests()) {
      const state = t.result().state;
      if (state === 'passed') counts.passed++;
      else if (state === 'failed') counts.failed++;
      else counts.skipped++;
    }
    const failed = m.state() === 'failed' || counts.failed > 0;
    if (failed && counts.failed === 0) counts.failed = 1;
    return { file: m.moduleId, failed, counts };
  });
  if (errors)
    out.push({ file: '', failed: true, counts: { passed: 0, failed: errors, skipped: 0 } });
  return out;
}

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
    // run-suite.ts reads each file's outcome from here to run a live file again on its own.
    const out = process.env.ONSET_SUITE_FILES_OUT;
    if (out) writeFileSync(out, JSON.stringify(fileOutcomes(modules, errors.length)));
  }
}
