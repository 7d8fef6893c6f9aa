/**
 * A vitest reporter that ends the run with one plain line of counts,
 * `tests: N passed, N failed, N skipped`, beside the default reporter's
 * coloured summary: CI reads a run's closing line to tell whether tests ran,
 * and vitest's own summary is not in a form it knows.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** One test file's outcome and counts (a file that failed outside its tests counts one failure). */
export interface FileOutcome {
  file: string;
  failed: boolean;
  counts: { passed: number; failed: number; skipped: number };
  /** The full names of the file's failed tests ('' for a file that failed outside its tests). */
  failedTests: string[];
}

/** Each file's outcome; `errors` outside any file (unhandled) are reported as `file: ''`. */
export function fileOutcomes(modules: ReadonlyArray<TestModule>, errors: number): FileOutcome[] {
  const out: FileOutcome[] = modules.map((m) => {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const failedTests: string[] = [];
    for (const t of m.children.allTests()) {
      const state = t.result().state;
      if (state === 'passed') counts.passed++;
      else if (state === 'failed') {
        counts.failed++;
        failedTests.push(t.fullName);
      } else counts.skipped++;
    }
    const failed = m.state() === 'failed' || counts.failed > 0;
    if (failed && counts.failed === 0) {
      counts.failed = 1;
      failedTests.push('');
    }
    return { file: m.moduleId, failed, counts, failedTests };
  });
  if (errors)
    out.push({
      file: '',
      failed: true,
      counts: { passed: 0, failed: errors, skipped: 0 },
      failedTests: [''],
    });
  return out;
}

/** One line per failed test, `failed: <file> > <test>`, the file relative to `cwd`. */
export function failureLines(outcomes: ReadonlyArray<FileOutcome>, cwd = process.cwd()): string[] {
  return outcomes.flatMap((f) =>
    f.failedTests.map((t) => {
      const file = f.file ? path.relative(cwd, f.file) : '(outside any file)';
      return `failed: ${file}${t ? ` > ${t}` : ' (the file itself)'}`;
    }),
  );
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
    const outcomes = fileOutcomes(modules, errors.length);
    // CI shows a run's tail only: the names of what failed come last, beside the counts.
    const lines = failureLines(outcomes);
    if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(`tests: ${n.passed} passed, ${failed} failed, ${n.skipped} skipped\n`);
    // run-suite.ts reads each file's outcome from here to run a file again on its own.
    const out = process.env.ONSET_SUITE_FILES_OUT;
    if (out) writeFileSync(out, JSON.stringify(outcomes));
  }
}
