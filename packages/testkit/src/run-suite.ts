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
 * A live file that failed is run once more on its own after the main run ends (it must then
 * pass; the count line takes that outcome).
 * Extra arguments go to both runs (file filters: a run none of whose files match passes empty).
 *
 *   node --import tsx packages/testkit/src/run-suite.ts [vitest args]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FileOutcome } from './summary-reporter.ts';

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
const liveFiles = path.join(outDir, 'live.json');
const main = start(['--project', 'onset', '--project', 'citus', ...extra], false);
const live = start(['--project', 'live', ...extra], true, {
  ONSET_LIVE_WORKERS: '1',
  ONSET_SUITE_FILES_OUT: liveFiles,
});
let again: Run | undefined;
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    main.child.kill(sig);
    live.child.kill(sig);
    again?.child.kill(sig);
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

// A live file that failed beside the main run is run once more on its own, after it: its bars
// (time to open, no step before a change) are about Onset on a host, and the main run's two
// workers beside it are neighbours' load it does not control (docs/agent.md "Reliability").
// The file must then pass every check; both outcomes are printed.
let liveCounts = b.counts ? [1, 2, 3].map((i) => Number(b.counts![i])) : [0, 0, 0];
let liveCode = b.code;
const first = b.code !== 0 ? readOutcomes(liveFiles) : null;
const failedFiles = first?.filter((f) => f.failed).map((f) => f.file) ?? [];
if (first && failedFiles.length && !failedFiles.includes('')) {
  const names = failedFiles.map((f) => path.relative(process.cwd(), f));
  process.stdout.write(
    `\n---- live: ${names.join(', ')} failed beside the main run; running ${names.length === 1 ? 'it' : 'them'} again on ${names.length === 1 ? 'its' : 'their'} own ----\n`,
  );
  const againFiles = path.join(outDir, 'again.json');
  again = start(['--project', 'live', ...names], false, {
    ONSET_LIVE_WORKERS: '1',
    ONSET_SUITE_FILES_OUT: againFiles,
  });
  const r = await again.done;
  const rerun = readOutcomes(againFiles);
  liveCode = r.code;
  liveCounts = sum([...first.filter((f) => !f.failed), ...(rerun ?? [])]);
  if (!rerun && r.code === 0) liveCode = 1;
}
const n = [1, 2, 3].map((i) => Number(a.counts?.[i] ?? 0) + liveCounts[i - 1]!);
// A run that ended without its counts line (it crashed, or found no files) counts as failed
// unless it exited cleanly.
const lost = [a, ...(again ? [] : [b])].filter((r) => !r.counts && r.code !== 0).length;
process.stdout.write(`tests: ${n[0]} passed, ${n[1]! + lost} failed, ${n[2]} skipped\n`);
rmSync(outDir, { recursive: true, force: true });
process.exit(a.code !== 0 || liveCode !== 0 ? 1 : 0);
