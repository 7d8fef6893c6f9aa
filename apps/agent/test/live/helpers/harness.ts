/**
 * One live run: a real Onset server on the embedded PostgreSQL, the real
 * agent tracing with bpftrace, a workload, and detection passes driven as the
 * production scheduler runs them, on test time (test-time.ts): a pass
 * MINUTE_LATENESS_MS past every test minute boundary m examines the minutes
 * before m (regressions/tasks.ts), through POST /api/v1/detect with `upto`.
 * Deploy markers go through POST /api/v1/deploys with `at`, as `onset deploy --at` sends them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { MINUTE_LATENESS_MS } from '@onset/server/internals';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { AgentConfig } from '../../../src/config/schema.ts';
import { startTestAgent, type TestAgent } from '../../helpers/agent.ts';
import { bpftraceSkipReason } from '../../helpers/requirements.ts';
import { MINUTE_MS, startTestTimeRelay, TestClock, type TestTimeRelay } from './test-time.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const WORKLOADS = path.resolve(HERE, '../workloads');

/** Why the live suite cannot run here, or null when it can (Linux, root and bpftrace). */
export function liveSkipReason(): string | null {
  const reason = bpftraceSkipReason();
  return reason ? `live tests ${reason}` : null;
}

export interface Regression {
  id: string;
  series_id: string;
  service: string;
  op: string;
  view: string;
  name: string;
  peer: string | null;
  onset: string;
  onset_uncertainty_ms: number;
  detected_at: string;
  metric: string;
  ratio_p50: number;
  ratio_p99: number;
  before: { p50_ms: number; p99_ms: number; count: number };
  after: { p50_ms: number; p99_ms: number; count: number };
  suspects: { deploy_id: string; service: string | null; score: number; reason: string }[];
  status: string;
}

/** A pass the test drove: the test minute it ran at, and the regressions that existed after it. */
export interface Pass {
  /** Test time of the scheduler tick this pass stands for (a minute boundary + MINUTE_LATENESS_MS). */
  at: number;
  /** Minutes before this were examined. */
  upto: number;
  /** Real milliseconds the POST took. */
  tookMs: number;
  regressions: Regression[];
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
}

export interface LiveRun {
  clock: TestClock;
  server: TestServer;
  relay: TestTimeRelay;
  /** The agent, unless the run was started without one. */
  agent: TestAgent | null;
  work: string;
  passes: Pass[];
  /** Drive one pass per test minute until stopped. */
  startPasses(): void;
  stopPasses(): Promise<void>;
  /** Wait (test time) until `pred` holds after a pass, or `maxMinutes` pass; returns the pass. */
  waitForPass(pred: (p: Pass) => boolean, maxMinutes: number): Promise<Pass | null>;
  /** Post a deploy marker (api.md "Deploy markers") at test time `at`; returns its id. */
  deploy(marker: Record<string, unknown>, at: number): Promise<string>;
  /** Per-minute p50/p99 (ms) and counts of the series matching `query`, as text (failure messages). */
  describeSeries(query: Record<string, string>): Promise<string>;
  /** Break down how long a regression took, from the change (test time). */
  detection(r: Regression, changeAt: number): Promise<Detection>;
  close(): Promise<void>;
}

export async function startLiveRun(opts: {
  /** The agent's service name and the process names it traces; null: no agent (instrumented services only). */
  agent: { service: string; comms: string[] } | null;
  /** Longest run in test minutes (sizes how far back test time starts). */
  maxMinutes: number;
  /** Adjust the agent's resolved config (e.g. to test time). */
  tune?: (c: AgentConfig, clock: TestClock) => void;
}): Promise<LiveRun> {
  const work = mkdtempSync('/var/tmp/onset-live-');
  const server = await startTestServer();
  const clock = new TestClock({ maxMinutes: opts.maxMinutes });
  const relay = await startTestTimeRelay(clock, server.otlpUrl);
  const agent = opts.agent
    ? await startTestAgent({
        flags: {
          endpoint: relay.url,
          serviceName: opts.agent.service,
          comm: opts.agent.comms,
          strace: false,
        },
        tune: (c) => {
          // Test time runs ~30x faster: send about as often, relative to a minute, as the default 1 s does.
          c.export.flushIntervalMs = 200;
          opts.tune?.(c, clock);
        },
      })
    : null;
  const passes: Pass[] = [];
  let running: Promise<void> | null = null;
  let stop = false;
  const listeners = new Set<() => void>();

  async function pass(at: number): Promise<void> {
    const upto = at - MINUTE_LATENESS_MS;
    const t0 = Date.now();
    const res = await fetch(`${server.url}/api/v1/detect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ upto: new Date(upto).toISOString() }),
    });
    if (!res.ok) throw new Error(`POST /api/v1/detect: ${res.status} ${await res.text()}`);
    await res.json();
    const list = await fetch(`${server.url}/api/v1/regressions`);
    if (!list.ok) throw new Error(`GET /api/v1/regressions: ${list.status}`);
    const { regressions } = (await list.json()) as { regressions: Regression[] };
    passes.push({ at, upto, tookMs: Date.now() - t0, regressions });
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
      // Like the cron: the next tick still ahead (a slow pass skips ticks, as a running pass makes the cron's a no-op).
      at = tickAfter(Math.max(at + 1, clock.now()));
    }
  }

  const run: LiveRun = {
    clock,
    server,
    relay,
    agent,
    work,
    passes,
    startPasses() {
      running = loop();
      running.catch(() => {});
    },
    async stopPasses() {
      stop = true;
      await running;
    },
    waitForPass(pred, maxMinutes) {
      const deadline = clock.now() + maxMinutes * MINUTE_MS;
      return new Promise((resolve, reject) => {
        const check = () => {
          const last = passes.at(-1);
          if (last && pred(last)) done(last);
          else if (clock.now() > deadline) done(null);
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
      const res = await fetch(`${server.url}/api/v1/deploys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...marker, at: new Date(at).toISOString() }),
      });
      if (res.status !== 201)
        throw new Error(`POST /api/v1/deploys: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    },
    async describeSeries(query) {
      const res = await fetch(`${server.url}/api/v1/series?${new URLSearchParams(query)}`);
      const { series } = (await res.json()) as {
        series: { id: string; name: string; op: string; view: string }[];
      };
      const from = new Date(clock.testStart).toISOString();
      const to = new Date(clock.now()).toISOString();
      const out: string[] = [];
      for (const s of series) {
        const q = await fetch(
          `${server.url}/api/v1/series/${s.id}/quantiles?from=${from}&to=${to}&step=1m&q=0.5,0.99`,
        );
        const { points } = (await q.json()) as {
          points: { t: string; count: number; q: Record<string, number> }[];
        };
        const rows = points
          .filter((p) => p.count > 0)
          .map(
            (p) =>
              `${p.t.slice(11, 16)} n=${p.count} ${p.q['0.5']?.toFixed(3)}/${p.q['0.99']?.toFixed(3)}`,
          );
        out.push(`${s.op}/${s.view} ${s.name}: ${rows.join(', ')}`);
      }
      return out.join('\n') || 'no series';
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
      };
    },
    async close() {
      stop = true;
      await running?.catch(() => {});
      await agent?.stop().catch(() => {});
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
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/** What a case found, for its assertions and its log line. */
export interface CaseResult {
  /** Every regression that existed at the end (the case expects one). */
  regressions: Regression[];
  markerId: string;
  changeAt: number;
  /** The detection of each regression, in the order of `regressions`. */
  detections: Detection[];
}

/**
 * The shape every case shares: `BASELINE` test minutes of steady behaviour (no
 * regression may open), a deploy marker for a moment in the
 * middle of a test minute, the change at that moment (the workload answers
 * `switched <epoch ms>`, which the times are measured from), then passes until a regression opens (at most `waitMinutes`)
 * and `afterMinutes` more, to see it opened once.
 */
export async function changeMidRun(
  run: LiveRun,
  opts: {
    workload: Workload;
    switchCommand: string;
    baselineMinutes: number;
    waitMinutes: number;
    afterMinutes: number;
    /** The deploy marker's fields (api.md "Deploy markers"), without `at`. */
    marker: Record<string, unknown>;
    /** What to show when nothing opens. */
    describe: () => Promise<string>;
  },
): Promise<CaseResult> {
  const { clock } = run;
  run.startPasses();
  const start = clock.now();
  const early = await run.waitForPass(
    (p) => p.regressions.length > 0 || p.at >= start + opts.baselineMinutes * MINUTE_MS,
    opts.baselineMinutes + 2,
  );
  if (early?.regressions.length)
    throw new Error(
      `regressions before the change: ${early.regressions.map((r) => `${r.service} ${r.op}/${r.view} ${r.name}`).join(', ')}`,
    );
  // The change comes mid-minute (neither the best nor the worst moment for the minute it falls in),
  // and the marker is posted for it first, as a deploy hook runs as the deploy starts.
  const planned = Math.ceil((clock.now() + MINUTE_MS) / MINUTE_MS) * MINUTE_MS + MINUTE_MS / 2;
  const markerId = await run.deploy(opts.marker, planned);
  await clock.until(planned);
  opts.workload.send(opts.switchCommand);
  const changeAt = clock.toTest(Number(await opts.workload.line('switched')));
  const found = await run.waitForPass((p) => p.regressions.length > 0, opts.waitMinutes);
  if (!found)
    throw new Error(
      `no regression ${opts.waitMinutes} test minutes after the change at ${new Date(changeAt).toISOString()}\n${await opts.describe()}`,
    );
  const settled = await run.waitForPass(
    (p) => p.at >= found.at + opts.afterMinutes * MINUTE_MS,
    opts.afterMinutes + 2,
  );
  await run.stopPasses();
  const regressions = (settled ?? found).regressions;
  const detections: Detection[] = [];
  for (const r of regressions) detections.push(await run.detection(r, changeAt));
  return { regressions, markerId, changeAt, detections };
}

/** One line per regression: labels, time to open and its parts, levels, top suspect. */
export function describeResult(res: CaseResult): string {
  return res.regressions
    .map((r, i) => {
      const d = res.detections[i]!;
      const top = r.suspects[0];
      return (
        `${r.service} ${r.op}/${r.view} ${r.name}${r.peer ? ` -> ${r.peer}` : ''}: opened ${d.minutes.toFixed(1)} test minutes after the change ` +
        `(onset ${d.onsetMinutes.toFixed(1)} ± ${(r.onset_uncertainty_ms / MINUTE_MS).toFixed(1)} min from it, ` +
        (d.lagMinutes >= 0
          ? `confirmed on its ${d.confirmPoints}th point, fed ${d.lagMinutes.toFixed(2)} min after that minute ended); `
          : `opened by another view's step: the headline's own was confirmed on its ${d.confirmPoints}th point); `) +
        `p50 ${r.before.p50_ms} → ${r.after.p50_ms} ms, p99 ${r.before.p99_ms} → ${r.after.p99_ms} ms; ` +
        `top suspect ${top ? (top.deploy_id === res.markerId ? 'the marker' : `${top.service} ${top.reason}`) : 'none'}`
      );
    })
    .join('\n');
}
