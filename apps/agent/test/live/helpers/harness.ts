/**
 * One live run: a real Onset server on the embedded PostgreSQL, the real
 * agent tracing with bpftrace, a workload, and detection passes driven as the
 * production scheduler runs them, on test time (test-time.ts): a pass
 * MINUTE_LATENESS_MS past every test minute boundary m examines the minutes
 * before m (detection/tasks.ts), through POST /api/v1/detect with `upto`.
 * Deploy markers go through POST /api/v1/deploys with `at`, as `onset deploy --at` sends them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  ApiError,
  createClient,
  type DeployInput,
  type HeldStep,
  type OpResponse,
  type Series,
  type SeriesListQuery,
} from '@onset/contract';
import { MINUTE_LATENESS_MS } from '@onset/server/internals';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { AgentConfig } from '../../../src/config/schema.ts';
import { startTestAgent, type TestAgent } from '../../helpers/agent.ts';
import { bpftraceSkipReason } from '../../helpers/requirements.ts';
import { MINUTE_MS, startTestTimeRelay, TestClock, type TestTimeRelay } from './test-time.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const WORKLOADS = path.resolve(HERE, '../workloads');

/** Why the live suite cannot run here, or null when it can (Linux, root, bpftrace and gcc). */
export function liveSkipReason(): string | null {
  const reason = bpftraceSkipReason();
  if (reason) return `the live tests ${reason.replace(/^needs/, 'need')}`;
  const gcc = (process.env.PATH ?? '').split(':').some((dir) => {
    try {
      accessSync(path.join(dir, 'gcc'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  return gcc
    ? null
    : 'the live tests need gcc on PATH (their C workloads are compiled at test time)';
}

/** A regression as the API answers it (the contract's type). */
export type Regression = OpResponse<'GET /api/v1/regressions'>['regressions'][number];

/** One series' minutes with data, as the quantiles API gives them (ms). */
export interface SeriesPoints extends Pick<
  Series,
  'id' | 'service' | 'op' | 'view' | 'name' | 'peer'
> {
  points: { t: number; count: number; p50: number; p99: number }[];
}

/** A pass the test drove: the test minute it ran at, and the regressions that existed after it. */
export interface Pass {
  /** Test time of the scheduler tick this pass stands for (a minute boundary + MINUTE_LATENESS_MS). */
  at: number;
  /** Minutes before this were examined. */
  upto: number;
  /** Test time it actually started (after `at` when the pass before overran). */
  ranAt: number;
  /** Real milliseconds the POST took, and of them the detection pass (after pairing and inference). */
  tookMs: number;
  detectMs: number;
  regressions: Regression[];
  /** Steps the pass held back because the host lost CPU to the hypervisor at their onset. */
  held: HeldStep[];
}

/** When and how a regression was found, in test minutes, for the report and the assertions. */
export interface Detection {
  regression: Regression;
  /** Test minutes from the change to the scheduler tick whose pass opened it. */
  minutes: number;
  /** The pieces: change → onset minute reported; the detector's points from the onset minute to the confirming one; the confirming minute's end → the pass that fed it. */
  onsetMinutes: number;
  confirmPoints: number;
  lagMinutes: number;
  /** How late (test minutes) the opening pass started after its tick, the pass before it having overran; and how long it took (real ms). */
  passLateMinutes: number;
  passMs: number;
}

export interface LiveRun {
  clock: TestClock;
  server: TestServer;
  relay: TestTimeRelay;
  /** The agents, one per traced service (none when the run has instrumented services only). */
  agents: TestAgent[];
  work: string;
  passes: Pass[];
  /** Passes answered 503 (retried): when, and the answer. */
  unavailable: string[];
  /** Drive one pass per test minute until stopped. */
  startPasses(): void;
  stopPasses(): Promise<void>;
  /** Wait (test time) until `pred` holds after a pass, or `maxMinutes` pass; returns the pass. */
  waitForPass(pred: (p: Pass) => boolean, maxMinutes: number): Promise<Pass | null>;
  /** Post a deploy marker (api.md "Deploy markers") at test time `at`; returns its id. */
  deploy(marker: Omit<DeployInput, 'at'>, at: number): Promise<string>;
  /** Per-minute counts and p50/p99 (ms) of the series matching `query` (api.md "Series"). */
  seriesPoints(query: SeriesListQuery): Promise<SeriesPoints[]>;
  /** The same as text (failure messages). */
  describeSeries(query: SeriesListQuery): Promise<string>;
  /** Break down how long a regression took, from the change (test time). */
  detection(r: Regression, changeAt: number): Promise<Detection>;
  close(): Promise<void>;
}

/**
 * One agent of a live run: the service it reports as and the process names it traces (none: the
 * whole host, as a host-wide agent reports the programs that have no agent of their own).
 */
export interface LiveAgent {
  service: string;
  comms: string[];
  /** Adjust the agent's resolved config (e.g. to test time; `work` is the run's directory). */
  tune?: (c: AgentConfig, clock: TestClock, work: string) => void;
}

/** Test minutes passes may fall behind their ticks before a wait gives up (60: two real minutes). */
const PASS_BACKLOG_MINUTES = 60;

export async function startLiveRun(opts: {
  /** One agent per traced service, as a per-service deployment runs them (none: instrumented services only). */
  agents: LiveAgent[];
  /** Longest run in test minutes (sizes how far back test time starts). */
  maxMinutes: number;
  /** Real milliseconds per test minute (default ONSET_LIVE_MINUTE_MS or 2000). */
  realMsPerMinute?: number;
}): Promise<LiveRun> {
  const work = mkdtempSync('/var/tmp/onset-live-');
  const server = await startTestServer();
  const clock = new TestClock({
    maxMinutes: opts.maxMinutes,
    realMsPerMinute: opts.realMsPerMinute,
  });
  const relay = await startTestTimeRelay(clock, server.otlpUrl);
  const agents = await Promise.all(
    opts.agents.map((a) =>
      startTestAgent({
        flags: { endpoint: relay.url, serviceName: a.service, comm: a.comms, strace: false },
        tune: (c) => {
          // Test time runs ~30x faster: send about as often, relative to a minute, as the default 1 s does.
          c.export.flushIntervalMs = 200;
          a.tune?.(c, clock, work);
        },
      }),
    ),
  );
  const api = createClient({ baseUrl: server.url });
  const passes: Pass[] = [];
  let running: Promise<void> | null = null;
  let stop = false;
  const listeners = new Set<() => void>();
  const unavailable: string[] = [];

  async function pass(at: number): Promise<void> {
    const upto = at - MINUTE_LATENESS_MS;
    const ranAt = clock.now();
    const t0 = Date.now();
    let body: OpResponse<'POST /api/v1/detect'>;
    for (let attempt = 1; ; attempt++) {
      try {
        body = await api.request('POST /api/v1/detect', {
          body: { upto: new Date(upto).toISOString() },
        });
        break;
      } catch (e) {
        // 503 (api.md: retry later): the loaded machine's database did not answer in time; the
        // scheduler would run again a minute later with this horizon's minutes still unfed.
        if (!(e instanceof ApiError) || e.status !== 503 || attempt === 5)
          throw e instanceof ApiError ? new Error(`POST /api/v1/detect: ${e.status} ${e.text}`) : e;
        unavailable.push(`${new Date(at).toISOString()}: ${e.text}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const { regressions } = await api.request('GET /api/v1/regressions', {}).catch((e) => {
      throw e instanceof ApiError ? new Error(`GET /api/v1/regressions: ${e.status}`) : e;
    });
    passes.push({
      at,
      upto,
      ranAt,
      tookMs: Date.now() - t0,
      detectMs: body.detection.duration_ms,
      regressions,
      held: body.detection.held ?? [],
    });
    for (const l of listeners) l();
  }

  /** The next scheduler tick at or after test time `t`: a minute boundary plus the lateness. */
  const tickAfter = (t: number) =>
    Math.ceil((t - MINUTE_LATENESS_MS) / MINUTE_MS) * MINUTE_MS + MINUTE_LATENESS_MS;

  async function loop(): Promise<void> {
    let at = tickAfter(clock.now());
    while (!stop) {
      await clock.until(at);
      if (stop) break;
      await pass(at);
      // Every tick gets its pass, with its own horizon, even when the one before overran: in
      // production a pass takes seconds of a 60 s minute, but on test time each real second of
      // it is half a minute, and skipping ticks would charge a pass's duration 30 times over.
      // A pass that runs late for its tick sees the same minutes (all before its horizon, sealed).
      at += MINUTE_MS;
    }
  }

  const run: LiveRun = {
    clock,
    server,
    relay,
    agents,
    work,
    passes,
    unavailable,
    startPasses() {
      running = loop();
      running.catch(() => {});
    },
    async stopPasses() {
      stop = true;
      await running;
    },
    waitForPass(pred, maxMinutes) {
      // Counted in ticks (passes catch up on ticks they fell behind on), with a real-time backstop
      // far enough out for a loaded machine: there a pass that opens regressions has taken 9 s
      // (4.5 test minutes), and passes fell more than 10 test minutes behind their ticks; the
      // ticks, not the wall clock, are what the production scheduler would have run on time.
      const deadline = tickAfter(clock.now()) + maxMinutes * MINUTE_MS;
      return new Promise((resolve, reject) => {
        const check = () => {
          const last = passes.at(-1);
          if (last && pred(last)) done(last);
          else if (
            (last && last.at > deadline) ||
            clock.now() > deadline + PASS_BACKLOG_MINUTES * MINUTE_MS
          )
            done(null);
        };
        const timer = setInterval(check, 200);
        const done = (p: Pass | null) => {
          clearInterval(timer);
          listeners.delete(check);
          resolve(p);
        };
        listeners.add(check);
        running?.catch((err: unknown) => {
          clearInterval(timer);
          listeners.delete(check);
          reject(err as Error);
        });
      });
    },
    async deploy(marker, at) {
      // The API rather than the CLI: starting the CLI takes seconds on a loaded machine, minutes of test time.
      const stored = await api
        .request('POST /api/v1/deploys', {
          body: { ...marker, at: new Date(at).toISOString() },
        })
        .catch((e) => {
          throw e instanceof ApiError
            ? new Error(`POST /api/v1/deploys: ${e.status} ${e.text}`)
            : e;
        });
      return stored.id;
    },
    async seriesPoints(query) {
      const { series } = await api.request('GET /api/v1/series', { query });
      const from = new Date(clock.testStart).toISOString();
      const to = new Date(clock.now()).toISOString();
      const out: SeriesPoints[] = [];
      for (const s of series) {
        const answer = await api.request('GET /api/v1/series/:id/quantiles', {
          params: { id: s.id },
          query: { from, to, step: '1m', q: '0.5,0.99' },
        });
        const points = 'points' in answer ? answer.points : [];
        out.push({
          ...s,
          points: points
            .filter((p) => p.count > 0)
            .map((p) => ({
              t: Date.parse(p.t),
              count: p.count,
              p50: p.q['0.5'] ?? NaN,
              p99: p.q['0.99'] ?? NaN,
            })),
        });
      }
      return out;
    },
    async describeSeries(query) {
      const rows = (await run.seriesPoints(query)).map((s) => {
        const pts = s.points.map(
          (p) =>
            `${new Date(p.t).toISOString().slice(11, 16)} n=${p.count} ${p.p50.toFixed(3)}/${p.p99.toFixed(3)}`,
        );
        return `${s.op}/${s.view} ${s.name}: ${pts.join(', ')}`;
      });
      return rows.join('\n') || 'no series';
    },
    async detection(r, changeAt) {
      const first = passes.find((p) => p.regressions.some((x) => x.id === r.id))!;
      // The detector's confirming minute is stored with the step (not in the API item).
      const db = new pg.Client(server.databaseUrl);
      await db.connect();
      let detectedT: number;
      try {
        const { rows } = await db.query<{ t: string }>(
          `SELECT change->>'detectedT' AS t FROM regressions WHERE id = $1`,
          [r.id],
        );
        detectedT = Number(rows[0]!.t);
      } finally {
        await db.end();
      }
      const onset = Date.parse(r.onset);
      return {
        regression: r,
        minutes: (first.at - changeAt) / MINUTE_MS,
        onsetMinutes: (onset - changeAt) / MINUTE_MS,
        confirmPoints: (detectedT - onset) / MINUTE_MS + 1,
        lagMinutes: (first.at - (detectedT + MINUTE_MS)) / MINUTE_MS,
        passLateMinutes: (first.ranAt - first.at) / MINUTE_MS,
        passMs: first.tookMs,
      };
    },
    async close() {
      stop = true;
      await running?.catch(() => {});
      await Promise.all(agents.map((a) => a.stop().catch(() => {})));
      await relay.close();
      await server.close();
      rmSync(work, { recursive: true, force: true });
    },
  };
  return run;
}

/** A workload process speaking lines: waits for a line by prefix, sends commands. */
export interface Workload {
  child: ChildProcess;
  lines: string[];
  /** The next line starting with `prefix` (already seen ones count), its rest. */
  line(prefix: string, timeoutMs?: number): Promise<string>;
  send(cmd: string): void;
  stop(): Promise<void>;
}

/**
 * Workloads run at real-time priority (SCHED_FIFO 10, `chrt`): on a shared CI machine other
 * jobs' load would otherwise show in their latencies as steps of its own, while what is under
 * test is the step their change makes. Children (spawned helpers) inherit it.
 */
export function startWorkload(cmd: string, args: string[], cwd?: string): Workload {
  const child = spawn('chrt', ['-f', '10', cmd, ...args], { stdio: ['pipe', 'pipe', 'pipe'], cwd });
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const rl = createInterface({ input: child.stdout! });
  const waiters = new Set<() => void>();
  rl.on('line', (l) => {
    lines.push(l);
    for (const w of waiters) w();
  });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  return {
    child,
    lines,
    line(prefix, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const l = lines.find((x) => x.startsWith(prefix));
          if (l !== undefined) {
            cleanup();
            resolve(l.slice(prefix.length).trim());
          } else if (child.exitCode !== null) {
            cleanup();
            reject(new Error(`${cmd} exited (${child.exitCode}) before "${prefix}": ${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${cmd}: no "${prefix}" within ${timeoutMs} ms; stderr: ${stderr}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        void exited.then(check);
        check();
      });
    },
    send(c) {
      child.stdin!.write(`${c}\n`);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        // A workload starved on an overloaded host (load 45+) may not get to run its exit in
        // time: after 5 s it is killed, so teardown never outlives the hook's limit.
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/** One change a live run makes mid-run, and how to tell its regressions. */
export interface LiveCase {
  /** Short name for logs (e.g. "spawn"). */
  name: string;
  workload: Workload;
  /** The line the workload takes as "change now"; it answers `switched <epoch ms>`. */
  switchCommand: string;
  /** The deploy marker's fields (api.md "Deploy markers"), without `at`. */
  marker: Omit<DeployInput, 'at'>;
  /** Whether a regression belongs to this case (its service). */
  owns: (r: Regression) => boolean;
  /** What to show when nothing opens. */
  describe: () => Promise<string>;
}

/** What a case found, for its assertions and its log line. */
export interface CaseResult {
  name: string;
  /** Every regression of this case that existed at the end (the case expects one). */
  regressions: Regression[];
  markerId: string;
  changeAt: number;
  /** The detection of each regression, in the order of `regressions`. */
  detections: Detection[];
}

export interface RunResult {
  cases: CaseResult[];
  /** Regressions that belong to no case (the agents' own activity, one case's load on another's series). */
  others: Regression[];
}

/**
 * The shape every live run shares: `baselineMinutes` test minutes of steady
 * behaviour (no regression may open), then each case's change, `staggerMinutes`
 * apart, each in the middle of a test minute (neither the best nor the worst
 * moment for the minute it falls in) with its deploy marker posted first, as a
 * deploy hook runs as the deploy starts. Times are measured from the workload's
 * own `switched <epoch ms>`. Passes go on until every case has a regression (at
 * most `waitMinutes` after the last change) and `afterMinutes` more, to see each
 * opened once.
 */
export async function changesMidRun(
  run: LiveRun,
  opts: {
    cases: LiveCase[];
    baselineMinutes: number;
    staggerMinutes: number;
    waitMinutes: number;
    afterMinutes: number;
  },
): Promise<RunResult> {
  const { clock } = run;
  run.startPasses();
  const start = clock.now();
  const early = await run.waitForPass(
    (p) => p.regressions.length > 0 || p.at >= start + opts.baselineMinutes * MINUTE_MS,
    opts.baselineMinutes + 2,
  );
  if (early?.regressions.length)
    throw new Error(
      `regressions before the change: ${early.regressions.map(describeEarly).join(', ')}; passes: ${describePasses(run)}`,
    );
  const first = Math.ceil((clock.now() + MINUTE_MS) / MINUTE_MS) * MINUTE_MS + MINUTE_MS / 2;
  const changes: { markerId: string; changeAt: number }[] = [];
  for (const [i, c] of opts.cases.entries()) {
    const planned = first + i * opts.staggerMinutes * MINUTE_MS;
    const markerId = await run.deploy(c.marker, planned);
    await clock.until(planned);
    c.workload.send(c.switchCommand);
    // The workload stamps its own change; at load 36-48 the answer took more than 30 s to be read.
    const changeAt = clock.toTest(Number(await c.workload.line('switched', 120_000)));
    changes.push({ markerId, changeAt });
  }
  const all = (p: Pass) => opts.cases.every((c) => p.regressions.some(c.owns));
  const found = await run.waitForPass(all, opts.waitMinutes);
  const last = found ?? run.passes.at(-1)!;
  const settled = found
    ? await run.waitForPass(
        (p) => p.at >= found.at + opts.afterMinutes * MINUTE_MS,
        opts.afterMinutes + 2,
      )
    : null;
  await run.stopPasses();
  const regressions = (settled ?? last).regressions;
  const cases: CaseResult[] = [];
  for (const [i, c] of opts.cases.entries()) {
    const mine = regressions.filter(c.owns);
    const detections: Detection[] = [];
    for (const r of mine) detections.push(await run.detection(r, changes[i]!.changeAt));
    cases.push({ name: c.name, regressions: mine, detections, ...changes[i]! });
  }
  const missing = opts.cases.filter((_, i) => cases[i]!.regressions.length === 0);
  if (missing.length) {
    const shown: string[] = [];
    for (const c of missing) shown.push(`${c.name}: ${await c.describe()}`);
    throw new Error(
      `no regression ${opts.waitMinutes} test minutes after the last change for ${missing.map((c) => c.name).join(', ')}\n` +
        `found: ${describeRun({ cases, others: [] })}\npasses: ${describePasses(run)}\n${shown.join('\n')}`,
    );
  }
  const others = regressions.filter((r) => !opts.cases.some((c) => c.owns(r)));
  return { cases, others };
}

/** A regression that opened before any change: where, when, and the levels it compared. */
function describeEarly(r: Regression): string {
  return (
    `${r.service} ${r.op}/${r.view} ${r.name} onset ${r.onset} (${r.metric}, ${r.status}; ` +
    `p50 ${r.before.p50_ms} → ${r.after.p50_ms} ms, p99 ${r.before.p99_ms} → ${r.after.p99_ms} ms)`
  );
}

/** How the passes kept up: how many, how long they took, how far behind their ticks they ran (failure messages). */
export function describePasses(run: LiveRun): string {
  const ps = run.passes;
  if (!ps.length) return 'no pass ran';
  const took = ps.map((p) => p.tookMs).sort((a, b) => a - b);
  const late = Math.max(...ps.map((p) => (p.ranAt - p.at) / MINUTE_MS));
  const last = ps.at(-1)!;
  return (
    `${ps.length} passes, took p50 ${took[took.length >> 1]} ms, max ${took.at(-1)} ms; ` +
    `at most ${late.toFixed(1)} test min behind their ticks; the last for tick ` +
    `${new Date(last.at).toISOString().slice(11, 16)} (${((run.clock.now() - last.at) / MINUTE_MS).toFixed(1)} test min ago)` +
    (run.unavailable.length ? `; ${run.unavailable.length} answered 503` : '') +
    describeHeld(ps.flatMap((p) => p.held))
  );
}

/** Steps held for host contention (docs/regressions.md), with the stolen CPU that held them. */
function describeHeld(held: HeldStep[]): string {
  if (!held.length) return '';
  const one = (h: HeldStep) =>
    `series ${h.series_id} onset ${h.onset.slice(11, 16)} (steal ${h.steal_before_ms_per_s} → ${h.steal_after_ms_per_s} ms/s)`;
  return `; ${held.length} step(s) held for host contention: ${held.map(one).join(', ')}`;
}

/** One line per regression: case, labels, time to open and its parts, levels, top suspect. */
export function describeRun(res: RunResult): string {
  const lines = res.cases.flatMap((c) =>
    c.regressions.map((r, i) => {
      const d = c.detections[i]!;
      const top = r.suspects[0];
      return (
        `[${c.name}] ${r.service} ${r.op}/${r.view} ${r.name}${r.peer ? ` -> ${r.peer}` : ''}: opened ${d.minutes.toFixed(1)} test minutes after the change ` +
        `(onset ${d.onsetMinutes.toFixed(1)} ± ${(r.onset_uncertainty_ms / MINUTE_MS).toFixed(1)} min from it, ` +
        (d.lagMinutes >= 0
          ? `confirmed on its ${d.confirmPoints}th point, fed ${d.lagMinutes.toFixed(2)} min after that minute ended); `
          : `opened by another view's step: the headline's own was confirmed on its ${d.confirmPoints}th point); `) +
        `its pass started ${d.passLateMinutes.toFixed(1)} test min after its tick and took ${d.passMs} ms; ` +
        `p50 ${r.before.p50_ms} → ${r.after.p50_ms} ms, p99 ${r.before.p99_ms} → ${r.after.p99_ms} ms; ` +
        `top suspect ${top ? (top.deploy_id === c.markerId ? 'the marker' : `${top.service} ${top.reason}`) : 'none'}`
      );
    }),
  );
  for (const r of res.others)
    lines.push(`[no case] ${r.service} ${r.op}/${r.view} ${r.name} onset ${r.onset}`);
  return lines.join('\n');
}
