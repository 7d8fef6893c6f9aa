/**
 * Live: five real workloads on one host, each changing behaviour at a known
 * moment with a deploy marker posted at the change (issue 20's four
 * incidents, and a program with no agent of its own), one server, one agent
 * per traced service (bpftrace), a host-wide agent for the rest, and two
 * services instrumented with the OpenTelemetry JS SDK, on test time
 * (helpers/test-time.ts). One run serves all five cases (a live run's
 * hour of history is most of its time); each case is asserted on its own:
 * one regression, on the right series, with its marker as top suspect,
 * opened within 5 test minutes of its change, and no regression anywhere else.
 *
 *  - spawn: a parent with 2,000 open fds spawns a helper every 10 ms with
 *    posix_spawn, then with fork + a pre-exec loop marking every fd
 *    close-on-exec (time to exec ×4–5; spawner.c logs its own figure).
 *  - fsync: a WAL keeper removes 40 segment files every 250 ms with one
 *    directory fsync per pass, then fsyncs after every unlink (on its own
 *    ext4 in RAM: bursts from ~0.15 ms to ~3 ms while each fsync gets
 *    cheaper): the agent's `fsync-burst` operation series must open, not the
 *    per-call one.
 *  - unmount: a service mounts a scratch tmpfs, writes 8 MB, unmounts, ~8
 *    times a test minute, then writes 128 MB (its own log: unmount ×10–15);
 *    the agent times the unmount until the thread is back in user space.
 *  - unclaimed: a second unmounter (8 → 64 MB) with no agent of its own, which
 *    the host-wide agent reports under the program's name (issue 34 item 5);
 *    its marker names the program and this host.
 *  - nagle: a callee starts writing header and body apart with Nagle on; its
 *    caller waits for the delayed ACK (+40 ms), the callee's own spans stay
 *    flat: the caller's side of the edge (client or gap view) must open.
 *
 * Part of `npm test` wherever it can run (root, bpftrace, gcc; it skips saying
 * which is missing). A run that fails while the hypervisor took 20 %+ of the
 * CPU the host wanted (the test's own /proc/stat samples) is run once more; a
 * last run that fails while it took 25 %+ over the whole run is reported
 * skipped as not conclusive (helpers/steal-verdict.ts, docs/agent.md
 * "Reliability").
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizePath } from '../../src/telemetry/normalize.ts';
import {
  changesMidRun,
  describePasses,
  describeRun,
  liveSkipReason,
  startLiveRun,
  startWorkload,
  type CaseResult,
  type LiveRun,
  type RunResult,
  type Workload,
} from './helpers/harness.ts';
import { bundle, compile } from './helpers/compile.ts';
import { mountRamExt4, type RamExt4 } from './helpers/ram-ext4.ts';
import { runJudged } from './helpers/steal-verdict.ts';

/**
 * Test minutes of steady behaviour before the first change: the detectors' history. ~95 points
 * (the workloads start a few minutes before the passes), as a series has after 1.5 hours: enough
 * for a very large step to be confirmed on 3 points (docs/detection.md "Time to open").
 */
const BASELINE_MINUTES = 90;
/**
 * Test minutes between one case's change and the next's: two, so a case's own minute and the next
 * (where its onset is dated) are clear of the next change's load.
 */
const STAGGER_MINUTES = 2;
/** Test minutes allowed after the last change (the bar is 5; the rest measures a slower detection). */
const WAIT_MINUTES = 12;
/** Test minutes kept after the last case opened, to see each opened once. */
const AFTER_MINUTES = 3;

/** A second run only when the first left time for it (helpers/steal-verdict.ts). */
const RETRY_IF_FIRST_UNDER_MS = 6 * 60_000;

const skip = liveSkipReason();
if (skip) console.warn(`live host test skipped: ${skip}`);

/** One live run and what it left behind to clean up. */
interface Attempt {
  run: LiveRun;
  result?: RunResult;
  /** What stopped the run before its cases could be judged (an early regression, none opened, …). */
  error?: Error;
  workloads: Workload[];
  scratch?: string;
  /** The unclaimed program's scratch mount point, and the service it is reported under. */
  unclaimed?: { scratch: string; service: string };
  walFs?: RamExt4;
  startedMs: number;
  endedMs: number;
}

let attempt: Attempt | undefined;
/** Why the last run's checks skip: it failed on a host the hypervisor took too much of. */
let inconclusive: string | undefined;

/** The host agent's host-wide agent: it reports the programs no other agent claims. */
const HOST_AGENT = 'live-host';

/**
 * What a host-wide agent names a program (docs/agent.md "Programs as services"): the systemd
 * service of its cgroup where it runs in one (on a CI runner, the runner's), else its executable.
 */
function programService(pid: number, executable: string): string {
  const cgroup = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('0::'));
  return /\/([^/]+)\.service$/.exec(cgroup ?? '')?.[1] ?? executable;
}

const stats = (w: Workload) =>
  w.lines
    .filter((l) => l.startsWith('stat '))
    .slice(-30)
    .join('; ');

/** One run of the five cases: a server, agents, workloads, the changes; never throws after it started. */
async function runOnce(): Promise<Attempt> {
  const startedMs = Date.now();
  const r = await startLiveRun({
    agents: [
      // One agent per host reports its CPU contention (docs/agent.md "Host CPU contention"): the
      // WAL keeper's, whose windows are test minutes.
      {
        service: 'live-spawn',
        comms: ['live-spawner'],
        tune: (c) => {
          c.host.cpu = false;
        },
      },
      {
        service: 'live-wal',
        comms: ['live-walkeeper'],
        tune: (c, clock) => {
          // Operations and rates on test time: a rate per test minute, and stragglers waited for as
          // long as bpftrace's delivery takes (its 100 ms epochs), not 5 s (2.5 test minutes, past sealing).
          c.operations.windowMs = clock.realMsPerMinute;
          c.operations.latenessMs = 300;
        },
      },
      {
        service: 'live-mounts',
        comms: ['live-unmounter'],
        tune: (c) => {
          c.host.cpu = false;
        },
      },
      {
        // Host-wide (no --comm): the agents above claim their programs, and it reports the rest
        // under each program's name. Its scope is the run's `unclaimed` directory: the shared
        // machine's other programs (the suite's PostgreSQL, other jobs) are not under test here.
        service: HOST_AGENT,
        comms: [],
        tune: (c, _clock, work) => {
          c.host.cpu = false;
          c.scope.exclude = ['/**'];
          c.scope.include = [`${work}/unclaimed{,/**}`];
        },
      },
    ],
    maxMinutes: BASELINE_MINUTES + 5 * STAGGER_MINUTES + WAIT_MINUTES + AFTER_MINUTES + 10,
  });
  const a: Attempt = { run: r, workloads: [], startedMs, endedMs: startedMs };
  const workloads = a.workloads;
  const start = (cmd: string, args: string[]) => {
    const w = startWorkload(cmd, args);
    workloads.push(w);
    return w;
  };

  // The workloads run at real-time priority (startWorkload), ahead of the server, PostgreSQL and
  // the agents: their rates are kept to what the series need (~200 spawns, ~8 unmounts, ~8 removal
  // passes, ~150 calls a test minute), so that on two shared cores the passes keep up with their
  // ticks. (At a spawn every 3 ms, a call every 5 ms and 256 MB unmounts they took about a core
  // after the changes, and under load passes ran up to 40 test minutes behind.)
  const helper = path.join(r.work, 'live-helper');
  copyFileSync('/bin/true', helper);
  const spawner = start(compile('spawner.c', r.work, 'live-spawner'), [helper, '2000', '10000']);
  const wal = path.join(r.work, 'pg_wal');
  mkdirSync(wal);
  // Its own ext4 in RAM: the suite's other PostgreSQL instances load the disk (helpers/ram-ext4.ts).
  const fs = mountRamExt4(wal);
  if (typeof fs === 'string') console.warn(`live host test: pg_wal on the shared disk (${fs})`);
  else a.walFs = fs;
  const keeper = start(compile('walkeeper.c', r.work, 'live-walkeeper'), [wal, '40', '250']);
  const scratch = path.join(r.work, 'scratch');
  a.scratch = scratch;
  mkdirSync(scratch);
  const unmounter = start(compile('unmounter.c', r.work, 'live-unmounter'), [
    scratch,
    '8',
    '128',
    '250',
  ]);
  const httpPair = await bundle('http-pair.ts', r.work, 'live-http-pair');
  const pair = (role: string, ...args: string[]) =>
    start(process.execPath, [httpPair, role, r.relay.url, ...args]);
  const callee = pair('callee');
  const caller = pair('caller', await callee.line('port'), '15');
  // The same workload again, with no agent of its own (its change smaller: two of 128 MB load the
  // host for the cases after it).
  const unclaimedScratch = path.join(r.work, 'unclaimed');
  mkdirSync(unclaimedScratch);
  const scratchd = start(compile('unmounter.c', r.work, 'live-scratchd'), [
    unclaimedScratch,
    '8',
    '64',
    '250',
  ]);
  const unclaimed = {
    scratch: unclaimedScratch,
    service: programService(scratchd.child.pid!, 'live-scratchd'),
  };
  a.unclaimed = unclaimed;
  for (const w of [spawner, keeper, unmounter, scratchd, caller]) await w.line('ready');

  const ofService =
    (...services: string[]) =>
    (x: { service: string }) =>
      services.includes(x.service);
  const dumpRun = async () => {
    // Test-only: keep what the run saw (every series' minutes, the changes, the passes) for study.
    const dump = process.env.ONSET_LIVE_DUMP;
    if (dump)
      writeFileSync(
        dump,
        JSON.stringify({
          // Real epoch ms of test time's start, to line the minutes up with host measurements.
          clock: {
            realStart: r.clock.realStart,
            testStart: r.clock.testStart,
            speed: r.clock.speed,
          },
          series: await r.seriesPoints({}),
          cases: a.result?.cases,
          others: a.result?.others,
          passes: r.passes.map((p) => ({
            at: p.at,
            ranAt: p.ranAt,
            tookMs: p.tookMs,
            detectMs: p.detectMs,
            n: p.regressions.length,
          })),
        }),
      );
  };
  // The Nagle pair first and the heaviest change (128 MB per unmount) last: a change's load can
  // step the series of a case still to come (the unmount change once lifted the Nagle gap's p99 a
  // minute before its own change), and Nagle's change adds none.
  try {
    a.result = await changesMidRun(r, {
      baselineMinutes: BASELINE_MINUTES,
      staggerMinutes: STAGGER_MINUTES,
      waitMinutes: WAIT_MINUTES,
      afterMinutes: AFTER_MINUTES,
      cases: [
        {
          name: 'nagle',
          workload: callee,
          switchCommand: 'nagle',
          marker: {
            service: 'live-callee',
            kind: 'dependency',
            component: 'hyper',
            from_version: '0.12.35',
            to_version: '0.13.1',
          },
          owns: ofService('live-caller', 'live-callee'),
          describe: async () =>
            `${await r.describeSeries({ service: 'live-caller' })}\ncaller: ${stats(caller)}\ncallee: ${stats(callee)}`,
        },
        {
          name: 'spawn',
          workload: spawner,
          switchCommand: 'switch',
          marker: {
            service: 'live-spawn',
            kind: 'code',
            to_version: 'fork-cloexec',
            description: 'spawn helpers with fork + per-fd FD_CLOEXEC',
          },
          owns: ofService('live-spawn'),
          describe: async () =>
            `${await r.describeSeries({ service: 'live-spawn' })}\nworkload: ${stats(spawner)}`,
        },
        {
          name: 'fsync',
          workload: keeper,
          switchCommand: 'switch',
          marker: {
            service: 'live-wal',
            kind: 'config',
            description: 'fsync the WAL directory after every unlink',
          },
          owns: ofService('live-wal'),
          describe: async () =>
            `${await r.describeSeries({ service: 'live-wal' })}\nworkload: ${stats(keeper)}`,
        },
        {
          name: 'unclaimed',
          workload: scratchd,
          switchCommand: 'switch',
          marker: {
            service: unclaimed.service,
            hosts: [os.hostname()],
            kind: 'code',
            description: 'scratch volumes hold 64 MB',
          },
          owns: ofService(unclaimed.service, HOST_AGENT),
          describe: async () =>
            `${await r.describeSeries({ service: unclaimed.service })}\nunder the host agent: ` +
            `${await r.describeSeries({ service: HOST_AGENT })}\nworkload: ${stats(scratchd)}`,
        },
        {
          name: 'unmount',
          workload: unmounter,
          switchCommand: 'switch',
          marker: {
            service: 'live-mounts',
            kind: 'code',
            description: 'scratch volumes hold 128 MB',
          },
          owns: ofService('live-mounts'),
          describe: async () =>
            `${await r.describeSeries({ service: 'live-mounts' })}\nworkload: ${stats(unmounter)}`,
        },
      ],
    });
  } catch (err) {
    a.error = err as Error;
  } finally {
    a.endedMs = Date.now();
    await dumpRun();
  }
  if (a.result)
    console.log(`live host run:\n${describeRun(a.result)}\npasses: ${describePasses(r)}`);
  for (const w of workloads) console.log(`${w.child.spawnfile} ${stats(w)}`);
  if (r.unavailable.length) console.log(`passes retried after a 503: ${r.unavailable.join('; ')}`);
  return a;
}

async function cleanUp(a: Attempt): Promise<void> {
  for (const w of a.workloads) await w.stop();
  // Stopped between its mount and its unmount, the unmounter leaves the scratch mount behind.
  for (const m of [a.scratch, a.unclaimed?.scratch]) if (m) spawnSync('umount', ['-l', m]);
  a.walFs?.close();
  await a.run.close();
}

/** What fails a run, one line each: an error that stopped it, each case's shared checks, others. */
function problems(a: Attempt): string[] {
  if (a.error || !a.result) return [a.error?.message ?? 'no result'];
  const out = a.result.cases.flatMap((c) => caseProblems(c).map((p) => `${c.name}: ${p}`));
  if (a.result.others.length) out.push(`others: ${a.result.others.map(label).join(', ')}`);
  return out;
}

beforeAll(async () => {
  if (skip) return;
  const verdict = await runJudged({
    name: 'live host',
    runOnce,
    problems,
    cleanUp,
    retryIfFirstUnderMs: RETRY_IF_FIRST_UNDER_MS,
  });
  attempt = verdict.attempt;
  inconclusive = verdict.inconclusive;
  if (attempt.error && !inconclusive) throw attempt.error;
}, 900_000);

afterAll(async () => {
  if (attempt) await cleanUp(attempt);
}, 300_000);

/**
 * The checks every case shares: one regression, its marker first, its onset within 2 test minutes
 * of the change, opened within 5. The change is mid-minute: its own minute (-0.5) or the next
 * (+0.5); within 2 test minutes either way, as the Nagle test asked (a change's load can lift the
 * next case's series a minute early; -1 failed a run at -1.5 that way).
 */
function caseProblems(c: CaseResult): string[] {
  if (c.regressions.length !== 1) return [`${c.regressions.length} regressions, not 1`];
  const [r] = c.regressions;
  const [d] = c.detections;
  const out: string[] = [];
  if (r!.suspects[0]?.deploy_id !== c.markerId)
    out.push(`top suspect ${r!.suspects[0]?.deploy_id ?? 'none'}, not the marker ${c.markerId}`);
  if (Math.abs(d!.onsetMinutes) > 2)
    out.push(`onset ${d!.onsetMinutes.toFixed(1)} test min from the change`);
  if (d!.minutes > 5) out.push(`opened ${d!.minutes.toFixed(1)} test min after the change`);
  return out;
}

/** The case's one regression, once the checks every case shares hold. */
function caseOf(name: string): CaseResult {
  const result = attempt!.result!;
  const c = result.cases.find((x) => x.name === name)!;
  expect(caseProblems(c), describeRun(result)).toEqual([]);
  return c;
}

const label = (r: { service: string; op: string; view: string; name: string }) =>
  `${r.service} ${r.op}/${r.view} ${r.name}`;

describe.skipIf(skip !== null)('live: five changes on one host', () => {
  it('spawn method: one regression on the helper’s spawn series, marker first, within 5 test minutes', (ctx) => {
    ctx.skip(inconclusive !== undefined, inconclusive);
    const c = caseOf('spawn');
    expect(label(c.regressions[0]!)).toBe('live-spawn spawn/internal live-helper');
    expect(c.regressions[0]!.ratio_p50).toBeGreaterThan(1.5);
  });

  it('fsync after every unlink: one regression on the removal operation’s series, marker first, within 5 test minutes', (ctx) => {
    ctx.skip(inconclusive !== undefined, inconclusive);
    const c = caseOf('fsync');
    expect(label(c.regressions[0]!)).toBe(
      `live-wal fsync/internal fsync-burst ${normalizePath(path.join(attempt!.run.work, 'pg_wal'))}`,
    );
  });

  it('unmount size: one regression on the mount point’s unmount series, marker first, within 5 test minutes', (ctx) => {
    ctx.skip(inconclusive !== undefined, inconclusive);
    const c = caseOf('unmount');
    expect(label(c.regressions[0]!)).toBe(
      `live-mounts unmount/internal ${normalizePath(attempt!.scratch!)}`,
    );
  });

  it('unclaimed program: one regression on its unmount series under its own name (not the host agent’s), its marker first, within 5 test minutes', (ctx) => {
    ctx.skip(inconclusive !== undefined, inconclusive);
    const c = caseOf('unclaimed');
    const { scratch, service } = attempt!.unclaimed!;
    expect(label(c.regressions[0]!)).toBe(`${service} unmount/internal ${normalizePath(scratch)}`);
  });

  it('Nagle: one regression on the caller’s view of the edge, marker first, within 5 test minutes', (ctx) => {
    ctx.skip(inconclusive !== undefined, inconclusive);
    const c = caseOf('nagle');
    const r = c.regressions[0]!;
    expect(r).toMatchObject({
      service: 'live-caller',
      op: 'request',
      name: 'GET /lookup',
      peer: 'live-callee',
    });
    expect(['client', 'gap']).toContain(r.view);
  });

  it('no regression on any other series (the agents’ own activity, one case’s load on another’s)', (ctx) => {
    ctx.skip(inconclusive !== undefined, inconclusive);
    expect(attempt!.result!.others.map(label)).toEqual([]);
  });
});
