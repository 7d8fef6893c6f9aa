/**
 * `npm test`'s vitest step: two vitest processes at once. One runs the 'onset' and 'citus'
 * projects with the config's two workers; the other runs the 'live' project (vitest.config.ts)
 * one file at a time. The live files take minutes each while mostly waiting on test time, so
 * in the shared pool of two they held a worker the CPU-bound files could have used; beside it,
 * they cost the run next to nothing. vitest gives one pool a single worker count, so the
 * third worker needs its own process.
 *
 * The live run's output is printed as one block once it ends (after the main run's, if that is
 * still going), and the run ends with one closing line of counts over both, as the summary
 * reporter's (`tests: N passed, N failed, N skipped`). Exits non-zero if either run failed.
 * A file that failed (live or not) is run once more on its own after both runs end: it must
 * then pass, and the count line takes that outcome. The names of every failed test, and of
 * every file that passed only on its own, are printed last, beside the count line, because CI
 * shows a run's tail.
 * Extra arguments go to both runs (file filters: a run none of whose files match passes empty).
 *
 *   node --import tsx packages/testkit/src/run-suite.ts [vitest args]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { failureLines, type FileOutcome } from './summary-reporter.ts';

const COUNTS = /^tests: (\d+) passed, (\d+) failed, (\d+) skipped$/m;

interface Run {
  child: ChildProcess;
  done: Promise<{ code: number; counts: RegExpExecArray | null }>;
  output: string[];
}

function start(args: string[], buffered: boolean, env: NodeJS.ProcessEnv = {}): Run {
  const child = spawn(
    process.execPath,
    ['node_modules/vitest/vitest.mjs', 'run', '--passWithNoTests', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    },
  );
  const output: string[] = [];
  let text = '';
  const take = (stream: NodeJS.WriteStream) => (d: Buffer) => {
    const s = d.toString();
    text += s;
    if (buffered) output.push(s);
    else stream.write(s);
  };
  child.stdout!.on('data', take(process.stdout));
  child.stderr!.on('data', take(process.stderr));
  const done = new Promise<{ code: number; counts: RegExpExecArray | null }>((resolve) =>
    child.on('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), counts: COUNTS.exec(text) }),
    ),
  );
  return { child, done, output };
}

const extra = process.argv.slice(2);
const outDir = mkdtempSync(path.join(os.tmpdir(), 'onset-suite-'));
const outFile = (name: string) => path.join(outDir, `${name}.json`);
const MAIN = ['--project', 'onset', '--project', 'citus'];
const main = start([...MAIN, ...extra], false, { ONSET_SUITE_FILES_OUT: outFile('main') });
const live = start(['--project', 'live', ...extra], true, {
  ONSET_LIVE_WORKERS: '1',
  ONSET_SUITE_FILES_OUT: outFile('live'),
});
const reruns: Run[] = [];
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    for (const r of [main, live, ...reruns]) r.child.kill(sig);
  });

const [a, b] = await Promise.all([main.done, live.done]);
process.stdout.write(
  `\n---- live project (${live.output.length ? 'its own process' : 'no output'}) ----\n`,
);
process.stdout.write(live.output.join(''));

const readOutcomes = (file: string): FileOutcome[] | null => {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as FileOutcome[];
  } catch {
    return null;
  }
};
const sum = (xs: FileOutcome[]) =>
  xs.reduce(
    (n, f) => [n[0]! + f.counts.passed, n[1]! + f.counts.failed, n[2]! + f.counts.skipped],
    [0, 0, 0],
  );

interface Outcome {
  code: number;
  counts: number[];
  /** What failed in the end, and what failed beside the others but passed on its own. */
  failed: FileOutcome[];
  passedAlone: FileOutcome[];
}

/**
 * A file that failed beside the rest of the suite is run once more on its own, after both runs
 * end: the live files' bars (time to open, no step before a change) and some timing in the
 * others are about Onset on a host, and the suite's other workers are neighbours' load it does
 * not control (docs/agent.md "Reliability"). The file must then pass every check; both outputs
 * are printed, and the names of a file that passed only on its own are printed last.
 */
async function settle(
  name: string,
  projectArgs: string[],
  r: { code: number; counts: RegExpExecArray | null },
  env: NodeJS.ProcessEnv = {},
): Promise<Outcome> {
  const counts = r.counts ? [1, 2, 3].map((i) => Number(r.counts![i])) : [0, 0, 0];
  const first = r.code !== 0 ? readOutcomes(outFile(name)) : null;
  const none = {
    code: r.code,
    counts,
    failed: first?.filter((f) => f.failed) ?? [],
    passedAlone: [],
  };
  // No outcomes (a crash), or an error outside any file: nothing to run again.
  if (!first || none.failed.length === 0 || none.failed.some((f) => f.file === '')) return none;
  const names = none.failed.map((f) => path.relative(process.cwd(), f.file));
  process.stdout.write(
    `\n---- ${name}: ${names.join(', ')} failed beside the rest; running ${names.length === 1 ? 'it' : 'them'} again on ${names.length === 1 ? 'its' : 'their'} own ----\n`,
  );
  const again = start([...projectArgs, ...names], false, {
    ...env,
    ONSET_SUITE_FILES_OUT: outFile(`${name}-again`),
  });
  reruns.push(again);
  const done = await again.done;
  const rerun = readOutcomes(outFile(`${name}-again`));
  const passed = first.filter((f) => !f.failed);
  const byFile = new Map((rerun ?? []).map((f) => [f.file, f]));
  return {
    code: done.code === 0 && rerun ? 0 : done.code || 1,
    counts: sum([...passed, ...(rerun ?? none.failed)]),
    failed: rerun ? rerun.filter((f) => f.failed) : none.failed,
    passedAlone: none.failed.filter((f) => byFile.get(f.file)?.failed === false),
  };
}

const mainOut = await settle('main', MAIN, a);
const liveOut = await settle('live', ['--project', 'live'], b, { ONSET_LIVE_WORKERS: '1' });
const n = [1, 2, 3].map((i) => mainOut.counts[i - 1]! + liveOut.counts[i - 1]!);
// A run that ended without its counts line (it crashed, or found no files) counts as failed
// unless it exited cleanly.
const lost = [a, b].filter((r) => !r.counts && r.code !== 0).length;
const alone = [...mainOut.passedAlone, ...liveOut.passedAlone];
process.stdout.write('\n');
for (const f of alone)
  process.stdout.write(
    `passed only on its own (failed beside the rest: ${f.failedTests.join('; ') || 'the file'}): ${path.relative(process.cwd(), f.file)}\n`,
  );
const lines = failureLines([...mainOut.failed, ...liveOut.failed]);
if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
process.stdout.write(`tests: ${n[0]} passed, ${n[1]! + lost} failed, ${n[2]} skipped\n`);
rmSync(outDir, { recursive: true, force: true });
process.exit(mainOut.code !== 0 || liveOut.code !== 0 ? 1 : 0);
