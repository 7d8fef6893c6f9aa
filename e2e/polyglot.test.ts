/**
 * Polyglot (issue 34): three services with the official zero-code
 * OpenTelemetry instrumentation (e2e/polyglot/README.md) — a Flask web
 * calling through `requests` under `opentelemetry-instrument`, a Go api with
 * otelhttp on both sides, a Java store under the Java agent — exporting
 * OTLP/HTTP protobuf to a real Onset server, on test time (the live suite's
 * clock and relay: a real second and a half stands for a minute, durations
 * untouched). Steady load, then a code deploy adding 25 ms inside the api's
 * /quote/{id}, then a dependency bump making the store's /stock/{id} 3×
 * slower, each with its marker posted as the deploy starts. What a user
 * would notice is asserted: nothing opens before the changes, each step opens
 * one regression on its route with its own marker as top suspect, no series
 * is named by a bare method, each caller's calls are its edge's client view
 * (named after the callee's route, peer the callee) and each service's server
 * routes and each edge's client view count each real call once. It prints the series Onset made with their counts, and
 * each regression with its time to open and members (issue 34 wants each
 * open within 5 test minutes; the store's ×3 takes 6-7 today).
 *
 * A run that fails while the hypervisor took 20 %+ of the CPU runs once more;
 * a last run that fails while it took 25 %+ over the whole run is reported
 * skipped as not conclusive (apps/agent/test/live/helpers/steal-verdict.ts).
 *
 * Skips, naming what is missing, where python3, go, java, javac or mvn is
 * absent. The first run builds the services from PyPI, the Go module proxy
 * and Maven Central (cached under node_modules/.cache/onset-polyglot).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  changesMidRun,
  describePasses,
  describeRun,
  startLiveRun,
  type LiveRun,
  type Regression,
  type RunResult,
} from '../apps/agent/test/live/helpers/harness.ts';
import { buildPolyglot, findToolchains } from './polyglot/build.ts';
import { driveLoad, startPolyglot, type Polyglot } from './polyglot/services.ts';
import { runJudged } from '../apps/agent/test/live/helpers/steal-verdict.ts';

/** Real ms per test minute. */
const MINUTE_MS_REAL = 1_500;
/** Test minutes of steady load before the first change: the detectors' history. */
const BASELINE_MINUTES = 90;
/** Test minutes between the two changes: the first has opened before the second starts. */
const STAGGER_MINUTES = 8;
const WAIT_MINUTES = 10;
const AFTER_MINUTES = 3;
/** Checkouts a real second (each is 3 web, 3 api and 1 store spans): 60 a test minute. */
const CHECKOUTS_PER_S = 40;

const tools = findToolchains();
const skip = 'missing' in tools ? `needs ${tools.missing.join(', ')} on PATH` : null;
if (skip) console.warn(`polyglot test skipped: ${skip}`);

/** One run: the server, the three services, their load, and what the run found. */
interface Attempt {
  run: LiveRun;
  pg?: Polyglot;
  load?: ReturnType<typeof driveLoad>;
  result?: RunResult;
  /** What stopped the run before its cases could be judged (an early regression, none opened…). */
  error?: Error;
  startedMs: number;
  endedMs: number;
}

let attempt: Attempt | undefined;
/** Why the last run's checks skip: it failed on a host the hypervisor took too much of. */
let inconclusive: string | undefined;
let run: LiveRun;
let load: ReturnType<typeof driveLoad> | undefined;
let result: RunResult;
let series: Awaited<ReturnType<LiveRun['seriesPoints']>> = [];
/** Two runs of ~3.5 min (helpers/steal-verdict.ts), the quiet wait between, and the builds. */
const RUN_MS = 1_200_000;
/** A second run only when the first left time for it. */
const RETRY_IF_FIRST_UNDER_MS = 7 * 60_000;

/** The regressions that have a member on a series whose name holds `route`. */
const onRoute = (route: string) => (r: Regression) =>
  r.name.includes(route) || r.members.some((m) => m.name.includes(route));
const label = (r: Regression) =>
  `${r.service} ${r.op}/${r.view} ${r.name}${r.peer ? ` -> ${r.peer}` : ''} (members: ${r.members
    .map((m) => `${m.service} ${m.view} ${m.name}`)
    .join(
      '; ',
    )}; top suspect: ${r.suspects[0] ? `${r.suspects[0].service} ${r.suspects[0].deploy_id}` : 'none'})`;

/** One run from a fresh server: baseline, the two changes, until each has opened. */
async function runOnce(built: Awaited<ReturnType<typeof buildPolyglot>>): Promise<Attempt> {
  if ('missing' in tools) throw new Error('unreachable: toolchains missing');
  const startedMs = Date.now();
  const total = BASELINE_MINUTES + STAGGER_MINUTES + WAIT_MINUTES + AFTER_MINUTES + 10;
  const r = await startLiveRun({ agents: [], maxMinutes: total, realMsPerMinute: MINUTE_MS_REAL });
  const a: Attempt = { run: r, startedMs, endedMs: startedMs };
  try {
    a.pg = await startPolyglot(tools, built, r.relay.url, {
      // Test time's equivalents of the SDKs' defaults: spans batched for a twelfth of a minute
      // (5 s of 60), metrics exported once a minute (60 s).
      OTEL_BSP_SCHEDULE_DELAY: String(Math.round(MINUTE_MS_REAL / 12)),
      OTEL_METRIC_EXPORT_INTERVAL: String(MINUTE_MS_REAL),
    });
    a.load = driveLoad(a.pg.webUrl, CHECKOUTS_PER_S);
    const { pg } = a;
    a.result = await changesMidRun(r, {
      baselineMinutes: BASELINE_MINUTES,
      staggerMinutes: STAGGER_MINUTES,
      waitMinutes: WAIT_MINUTES,
      afterMinutes: AFTER_MINUTES,
      cases: [
        {
          name: 'api +25 ms',
          workload: pg.api,
          switchCommand: 'step',
          marker: {
            service: 'api',
            kind: 'code',
            to_version: 'api-2',
            description: 'quote: price rules evaluated per request',
          },
          owns: onRoute('/quote'),
          describe: () => r.describeSeries({ service: 'api' }),
        },
        {
          name: 'store ×3',
          workload: pg.store,
          switchCommand: 'step',
          marker: {
            service: 'store',
            kind: 'dependency',
            component: 'stock-db-driver',
            from_version: '4.1.0',
            to_version: '5.0.0',
          },
          owns: onRoute('/stock'),
          describe: () => r.describeSeries({ service: 'store' }),
        },
      ],
    });
    await a.load.stop();
  } catch (err) {
    a.error = err as Error;
    // What did open, with members and suspects: a step that joined another regression, or
    // opened under a name no case owns, shows here (the harness names only the cases').
    const list = (await fetch(`${r.server.url}/api/v1/regressions?limit=50`)
      .then((res) => res.json())
      .catch(() => ({ regressions: [] }))) as { regressions: Regression[] };
    console.log(
      `polyglot regressions at the failure:\n${list.regressions.map((x) => `  ${label(x)}`).join('\n')}`,
    );
  }
  a.endedMs = Date.now();
  return a;
}

/** What fails a run, one line each (the retry reads it; the its below assert the same). */
function problems(a: Attempt): string[] {
  if (a.error || !a.result) return [a.error?.message ?? 'no result'];
  const out: string[] = [];
  for (const c of a.result.cases) {
    if (c.regressions.length !== 1)
      out.push(`${c.name}: ${c.regressions.length} regressions, not 1`);
    else if (c.regressions[0]!.suspects[0]?.deploy_id !== c.markerId)
      out.push(`${c.name}: top suspect ${label(c.regressions[0]!)}`);
  }
  if (a.result.others.length) out.push(`others: ${a.result.others.map(label).join(', ')}`);
  return out;
}

async function cleanUp(a: Attempt): Promise<void> {
  await a.load?.stop();
  await a.pg?.stop();
  await a.run.close();
}

describe.skipIf(skip)('polyglot: Python, Go and Java zero-code instrumentation', () => {
  beforeAll(async () => {
    if ('missing' in tools) return;
    const built = await buildPolyglot(tools);
    const verdict = await runJudged({
      name: 'polyglot',
      runOnce: () => runOnce(built),
      problems,
      cleanUp,
      retryIfFirstUnderMs: RETRY_IF_FIRST_UNDER_MS,
    });
    attempt = verdict.attempt;
    inconclusive = verdict.inconclusive;
    if (attempt.error && !inconclusive) throw attempt.error;
    run = attempt.run;
    load = attempt.load;
    result = attempt.result!;
  }, RUN_MS);

  afterAll(async () => {
    if (attempt) await cleanUp(attempt);
  }, 60_000);

  /** The case's regressions, first opened first, with their detections. */
  const opened = (c: RunResult['cases'][number]) =>
    c.regressions
      .map((r, i) => ({ r, d: c.detections[i]! }))
      .sort((a, b) => a.d.minutes - b.d.minutes);

  it('each injected step opens a regression on its route with its own marker as top suspect', (ctx) => {
    ctx.skip(inconclusive !== undefined, inconclusive);
    const report = describeRun(result);
    for (const c of result.cases) {
      const first = opened(c)[0];
      expect(first, `${c.name}: ${report}`).toBeTruthy();
      expect(first!.r.suspects[0]?.deploy_id, `${c.name} top suspect: ${label(first!.r)}`).toBe(
        c.markerId,
      );
    }
  });

  it('each injected step is opened once (its views and callers join one regression)', (ctx) => {
    ctx.skip(inconclusive !== undefined, inconclusive);
    for (const c of result.cases)
      expect(c.regressions.map(label), `${c.name}: ${describeRun(result)}`).toHaveLength(1);
    // Nothing else opened: not a caller's route that makes the slowed call (api's /items/{id}
    // calls the store), under its own service's release.
    expect(result.others.map(label), describeRun(result)).toEqual([]);
  });

  it('the load was answered, and no series is named by a bare method', async (ctx) => {
    ctx.skip(inconclusive !== undefined, inconclusive);
    expect(load!.stats.failed, load!.stats.lastError).toBe(0);
    expect(load!.stats.ok).toBeGreaterThan(
      (BASELINE_MINUTES * MINUTE_MS_REAL * CHECKOUTS_PER_S) / 1000 / 2,
    );
    series = await run.seriesPoints({});
    const names = series.map((s) => `${s.service} ${s.view} ${s.name}`);
    for (const s of series)
      expect(s.name, `series names: ${names.join(', ')}`).not.toMatch(/^(HTTP )?[A-Z]+$/);
  });

  it('each caller’s calls are its edge’s client view, named after the callee’s route, counted once', (ctx) => {
    ctx.skip(inconclusive !== undefined, inconclusive);
    const checkouts = load!.stats.ok;
    const clients = series.filter((s) => s.view === 'client' && s.name.startsWith('GET '));
    expect(clients.map((s) => `${s.service} ${s.name} -> ${s.peer}`).sort()).toEqual([
      'api GET /stock/ -> store',
      'web GET /items/{id} -> api',
      'web GET /quote/{id} -> api',
    ]);
    for (const s of clients) {
      const calls = s.points.reduce((n, p) => n + p.count, 0);
      expect(
        calls / checkouts,
        `${s.service} ${s.name}: ${calls} calls for ${checkouts}`,
      ).toBeGreaterThan(0.99);
      expect(
        calls / checkouts,
        `${s.service} ${s.name}: ${calls} calls for ${checkouts}`,
      ).toBeLessThan(1.01);
    }
  });

  it('each service’s own server routes count its real calls once (the Java agent’s metrics add none)', (ctx) => {
    ctx.skip(inconclusive !== undefined, inconclusive);
    const checkouts = load!.stats.ok;
    // Per checkout: web serves /checkout once, api serves /items and /quote once each, the
    // store serves /stock once.
    const routes = [
      ['web', 'GET /checkout/<item>'],
      ['api', 'GET /items/{id}'],
      ['api', 'GET /quote/{id}'],
      ['store', 'GET /stock/'],
    ] as const;
    for (const [service, name] of routes) {
      const own = series.filter(
        (s) => s.service === service && s.view === 'server' && s.name === name,
      );
      expect(own, `${service} ${name}`).toHaveLength(1);
      const calls = own[0]!.points.reduce((n, p) => n + p.count, 0);
      expect(
        calls / checkouts,
        `${service} ${name}: ${calls} calls for ${checkouts}`,
      ).toBeGreaterThan(0.99);
      expect(calls / checkouts, `${service} ${name}: ${calls} calls for ${checkouts}`).toBeLessThan(
        1.01,
      );
    }
    console.log(
      `polyglot: ${checkouts} checkouts; ${describePasses(run)}\nseries (service view name: calls):\n  ` +
        series
          .map(
            (s) =>
              `${s.service} ${s.op}/${s.view} ${JSON.stringify(s.name)}${s.peer ? ` -> ${s.peer}` : ''}: ${s.points.reduce((n, p) => n + p.count, 0)}`,
          )
          .join('\n  ') +
        `\nregressions:\n${describeRun(result)}\n` +
        [
          ...result.cases.flatMap((c) => c.regressions.map((r) => `  [${c.name}] ${label(r)}`)),
          ...result.others.map((r) => `  [no case] ${label(r)}`),
        ].join('\n'),
    );
  });
});
