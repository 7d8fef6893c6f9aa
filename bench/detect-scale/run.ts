/**
 * bench/detect-scale: the server with a cardinality accident's worth of
 * series (100,000 and 400,000 by default) in embedded PostgreSQL. Through
 * the real server process and its HTTP API it times one full detection run
 * (edge pairing, marker inference, the cold detection pass), one SLO pass
 * and one incremental detection pass, samples the server's RSS, and times
 * GET /api/v1/series with that many series. The server's peak RSS (VmHWM)
 * is compared with the documented budget (docs/deploy.md "Memory on large
 * passes"): resident baseline + ONSET_DETECT_CACHE_MB + the per-pass working
 * set (memoryBudgetMb in apps/server/src/detection/budget.ts).
 *
 *   npm run bench:detect-scale [-- --series 100000,400000 --points 5 --calls 0.25 --slos 50]
 *
 * Fixture, made with generate_series in SQL (seconds, not hours of ingest):
 * per series `--points` minute histograms ending two minutes ago (a new
 * series' detector is fed them in the cold pass), one resource per 20
 * series; `--calls` x series client/server span pairs spread over 1,000
 * edges for pairing; `--slos` SLOs (one per service) created through the
 * API, then one server span per 10 series arrives for the SLO pass to count.
 * Not part of npm test.
 */
import { parseArgs } from 'node:util';
import { readFile } from 'node:fs/promises';
import { createPool, migrate } from '@onset/server/internals';
import { buildFixture } from './fixture.ts';
import {
  benchDatabase,
  percentile,
  rssMb,
  startServerProcess,
  writeResult,
} from '../lib/harness.ts';
import { detectBudget } from '../../apps/server/src/config.ts';
import { memoryBudgetMb } from '../../apps/server/src/detection/budget.ts';
import { callJson as call } from '../lib/call.ts';

const { values: args } = parseArgs({
  options: {
    series: { type: 'string', default: '100000,400000' },
    points: { type: 'string', default: '5' },
    calls: { type: 'string', default: '0.25' },
    slos: { type: 'string', default: '50' },
  },
});
const SIZES = args.series.split(',').map(Number);
const POINTS = Number(args.points);
const CALLS_PER_SERIES = Number(args.calls);
const SLOS = Number(args.slos);
const MIN = 60_000;

const log = (msg: string) => console.log(`bench/detect-scale: ${msg}`);
const secs = (ms: number) => Number((ms / 1000).toFixed(2));

async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t };
}

interface DetectAnswer {
  pairing: { pairs: number; edges: number };
  detection: {
    duration_ms: number;
    skipped?: boolean;
    series: { total: number; new: number; fed: number; points: number };
    regressions: { opened: number };
  };
}

/** SLO spans: one server span per 10 series, arriving now (after the SLOs exist). */
async function sloSpans(url: string, n: number): Promise<number> {
  const pool = createPool(url, 2);
  const r = await pool.query(
    `INSERT INTO observations (received_day, trace_id, span_id, series_id, resource_id, start_time, duration_us, kind)
     SELECT current_date, decode(lpad(to_hex(j), 24, '0') || 'ffffffff', 'hex'), decode(lpad(to_hex(j), 16, '0'), 'hex'),
            j * 10, 1 + j / 2, now() - interval '30 seconds', 1000 + (j % 100) * 100, 2
       FROM generate_series(1, $1) j`,
    [Math.floor(n / 10)],
  );
  await pool.end();
  return r.rowCount ?? 0;
}

async function seriesLatency(base: string): Promise<Record<string, number>> {
  const urls = [
    `${base}/api/v1/series`,
    `${base}/api/v1/series?service=svc-42`,
    `${base}/api/v1/series?host=host-7`,
    `${base}/api/v1/series?view=server&op=request`,
  ];
  const ms: number[] = [];
  for (let round = 0; round < 3; round++)
    for (const u of urls) ms.push((await timed(() => call('GET', u))).ms);
  return {
    requests: ms.length,
    p50_ms: Math.round(percentile(ms, 0.5)),
    max_ms: Math.round(Math.max(...ms)),
  };
}

async function run(n: number): Promise<Record<string, unknown>> {
  const { db, url } = await benchDatabase();
  try {
    await migrate(url);
    const end = Math.floor(Date.now() / MIN) * MIN - MIN;
    const fix = await buildFixture(url, n, end, {
      points: POINTS,
      callsPerSeries: CALLS_PER_SERIES,
      log,
    });
    // The series exist already (an accident before limits, or limits raised): the cardinality
    // guard's limits are lifted so pairing creates its edge series as it would have.
    const server = await startServerProcess(url, {
      ONSET_LOG_LEVEL: 'info',
      ONSET_MAX_SERIES: '10000000',
      ONSET_MAX_SERIES_PER_SERVICE: '10000000',
    });
    const pid = server.proc.pid!;
    // The harness waits 20 s; a loaded machine with this many series may need longer.
    for (let i = 0; i < 600; i++) {
      if (server.proc.exitCode !== null) throw new Error('the server exited');
      const ok = await fetch(`${server.url}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const progressLines: string[] = [];
    server.proc.stdout!.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n')) {
        if (/pass: \d+\/\d+|pairing pass:/.test(line)) progressLines.push(line);
        if (/"level":(40|50|60)/.test(line)) console.error(`server: ${line.slice(0, 2000)}`);
      }
    });
    let sampledPeak = 0;
    const sampler = setInterval(() => {
      rssMb(pid).then(
        (mb) => (sampledPeak = Math.max(sampledPeak, mb)),
        () => {},
      );
    }, 200);
    try {
      const baseline = Math.round(await rssMb(pid));
      const seriesBefore = await seriesLatency(server.url);
      log(
        `${n}: server up, RSS ${baseline} MB; GET /api/v1/series ${JSON.stringify(seriesBefore)}`,
      );

      // The cold run right away (before the scheduler's minute comes): pairing, inference, detection; GET /api/v1/detect polled for progress meanwhile.
      let seenRunning: { series_done: number; series_total: number } | null = null;
      let polling = true;
      const poller = (async () => {
        while (polling) {
          const d = await call<{ running: { series_done: number; series_total: number } | null }>(
            'GET',
            `${server.url}/api/v1/detect`,
          ).catch(() => null);
          if (d?.running && d.running.series_done > 0) seenRunning = d.running;
          await new Promise((r) => setTimeout(r, 1000));
        }
      })();
      const cold = await timed(() => call<DetectAnswer>('POST', `${server.url}/api/v1/detect`, {}));
      polling = false;
      await poller;
      const coldPeak = await peakRssMb(pid);
      log(
        `${n}: cold run ${secs(cold.ms)} s (detection ${secs(cold.value.detection.duration_ms)} s, ` +
          `${cold.value.detection.series.total} series, ${cold.value.detection.series.points} points; ` +
          `${cold.value.pairing.pairs} pairs on ${cold.value.pairing.edges} edges), peak RSS ${coldPeak} MB`,
      );

      // SLOs (their backfill is part of creating them), then spans for the SLO pass to count.
      for (let i = 0; i < SLOS; i++)
        await call('POST', `${server.url}/api/v1/slos`, {
          name: `bench ${i}`,
          service: `svc-${i * 7}`,
          threshold_ms: 5,
          objective: 0.99,
          window: '28d',
        });
      const spans = await sloSpans(url, n);

      const slo = await timed(() =>
        call<{ slos: number; ms: number }>('POST', `${server.url}/api/v1/slos/evaluate`, {}),
      );
      log(`${n}: SLO pass ${secs(slo.ms)} s over ${SLOS} SLOs (${spans} new spans)`);

      const incremental = await timed(() =>
        call<DetectAnswer>('POST', `${server.url}/api/v1/detect`, {}),
      );
      log(`${n}: incremental run ${secs(incremental.ms)} s`);
      const seriesAfter = await seriesLatency(server.url);
      const peak = await peakRssMb(pid);
      const budget = memoryBudgetMb(detectBudget(), cold.value.detection.series.total);
      log(
        `${n}: peak RSS ${peak} MB (sampled ${Math.round(sampledPeak)} MB), budget ${budget} MB; ` +
          `GET /api/v1/series after the passes ${JSON.stringify(seriesAfter)}`,
      );
      return {
        series: n,
        points_per_series: POINTS,
        ...fix,
        slos: SLOS,
        slo_spans: spans,
        baseline_rss_mb: baseline,
        cold_run: {
          seconds: secs(cold.ms),
          detection_seconds: secs(cold.value.detection.duration_ms),
          pairing_and_inference_seconds: secs(cold.ms - cold.value.detection.duration_ms),
          series_total: cold.value.detection.series.total,
          series_new: cold.value.detection.series.new,
          points: cold.value.detection.series.points,
          pairs: cold.value.pairing.pairs,
          edges: cold.value.pairing.edges,
          peak_rss_mb: coldPeak,
          // True when the scheduler's pass ran the cold start first and this POST waited for it.
          cold_pass_ran_elsewhere: cold.value.detection.series.new < n,
        },
        slo_pass: { seconds: secs(slo.ms), server_ms: slo.value.ms },
        incremental_run: {
          seconds: secs(incremental.ms),
          detection_seconds: secs(incremental.value.detection.duration_ms),
        },
        progress: {
          seen_in_get_detect: seenRunning,
          log_lines: progressLines.length,
          last_log_line: progressLines.at(-1)?.slice(0, 300) ?? null,
        },
        peak_rss_mb: peak,
        rss_budget_mb: budget,
        under_budget: peak <= budget,
        get_series_before_passes: seriesBefore,
        get_series_after_passes: seriesAfter,
      };
    } finally {
      clearInterval(sampler);
      await server.stop();
    }
  } finally {
    await db.stop();
  }
}

const runs: Array<Record<string, unknown>> = [];
for (const n of SIZES) runs.push(await run(n));
console.table(
  Object.fromEntries(
    runs.map((r) => {
      const c = r.cold_run as { seconds: number; detection_seconds: number };
      return [
        String(r.series),
        {
          'cold run s': c.seconds,
          'detection s': c.detection_seconds,
          'SLO pass s': (r.slo_pass as { seconds: number }).seconds,
          'peak RSS MB': r.peak_rss_mb,
          'budget MB': r.rss_budget_mb,
          'GET /series max ms': (r.get_series_after_passes as { max_ms: number }).max_ms,
        },
      ];
    }),
  ),
);
log(
  `wrote ${await writeResult(`detect-scale-${SIZES.join('-')}`, { budget: detectBudget(), runs })}`,
);
