/**
 * bench/ingest: sustained OTLP protobuf ingest (batches of 200 spans) from a
 * load generator in a separate process into a server process on embedded
 * PostgreSQL. Prints spans/s, spans per CPU-second of the server and of
 * PostgreSQL (from /proc/<pid>/stat), request p50/p99, the server's peak RSS,
 * the share of the server's CPU spent in garbage collection, WAL bytes per
 * span, and checks that every acknowledged span is stored exactly once.
 *
 * BENCH_LOAD=realistic (default) sends what a Collector's batches look like
 * (many services, hosts, resources and traces per body, loads.ts);
 * BENCH_LOAD=friendly the earlier one-trace-per-body load, for comparison.
 * BENCH_CONCURRENCY exports in flight (default 16); BENCH_WARMUP seconds of
 * load (default 20) before the BENCH_SECONDS measured (default 30). BENCH_PG_STATS=1 loads
 * pg_stat_statements and prints the statements PostgreSQL spent most time on.
 *
 * BENCH_COMPARE=/path/to/other/checkout runs that checkout's server and this
 * one alternately (BENCH_ROUNDS rounds each, fresh database every run) so the
 * two are compared under the same load on a shared machine: compare the
 * ratios, not the absolute numbers. BENCH_ENV / BENCH_COMPARE_ENV ("K=V K=V")
 * add server settings to this build's / the compared build's runs (the same
 * checkout with two settings: BENCH_COMPARE=. BENCH_ENV=ONSET_INGEST_WORKERS=1); an entry
 * "PG:name=value" is a PostgreSQL setting of that run's database instead
 * (BENCH_ENV=PG:max_wal_size=4GB).
 */
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  ROOT,
  benchDatabase,
  percentile,
  postmasterPid,
  rssMb,
  startServerProcess,
  writeResult,
} from '../lib/harness.ts';
import { startLoadgen } from './loadgen-process.ts';
import { postgresCpuSeconds, processCpuSeconds } from './cpu.ts';
import { loadServices, loadShape, MARK_TAIL } from './loads.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
/** Seconds of load before the measured ones (JIT, caches, exemplar counters past their first spans). */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const LOAD = loadShape(process.env.BENCH_LOAD);
const PG_STATS = process.env.BENCH_PG_STATS === '1';
const BATCH = 200;
const COMPARE = process.env.BENCH_COMPARE;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const GC_PROBE = path.join(ROOT, 'bench/ingest/gc-probe.mjs');

interface RunResult {
  server: string;
  load: string;
  concurrency: number;
  spans_per_second: number;
  spans: number;
  failed_requests: number;
  seconds: number;
  server_cpu_seconds: number;
  postgres_cpu_seconds: number;
  spans_per_server_cpu_second: number;
  spans_per_postgres_cpu_second: number;
  spans_per_cpu_second: number;
  request_p50_ms: number;
  request_p99_ms: number;
  server_peak_rss_mb: number;
  gc_share_of_server_cpu: number;
  stored_exactly_once: boolean;
  stored_rows: number;
  histogram_count: number;
  durations_count: number;
  /** Share of the spans received in the measured window that are exemplars. */
  exemplar_share: number;
  /** Over the whole run, warm-up included. */
  histogram_rows_per_span: number;
  duration_rows_per_span: number;
  wal_bytes_per_span: number;
  observations_bytes_per_span: number;
  histograms_bytes_per_span: number;
}

/** What each of the server's threads' probe (gc-probe.mjs) last wrote: its flushes and GC ms. */
async function gcFiles(prefix: string): Promise<Map<string, { flushes: number; ms: number }>> {
  const dir = path.dirname(prefix);
  const out = new Map<string, { flushes: number; ms: number }>();
  for (const f of await readdir(dir)) {
    if (!f.startsWith(path.basename(prefix) + '.') || f.endsWith('.tmp')) continue;
    const [flushes, ms] = (await readFile(path.join(dir, f), 'utf8')).split(' ').map(Number);
    out.set(f, { flushes: flushes ?? 0, ms: ms ?? 0 });
  }
  return out;
}

/**
 * GC ms of the server's threads so far: asked of their probes, then read once every thread
 * seen before has answered (up to 5 s; a slow answer would otherwise read as no GC).
 */
async function gcMs(prefix: string, pid: number): Promise<number> {
  const before = await gcFiles(prefix);
  try {
    process.kill(pid, 'SIGUSR2');
  } catch (err) {
    throw new Error(`the server (pid ${pid}) is gone: cannot ask it for its GC time`, {
      cause: err,
    });
  }
  const deadline = Date.now() + 5000;
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await gcFiles(prefix);
    const answered =
      now.size > 0 &&
      [...before].every(([f, b]) => (now.get(f)?.flushes ?? 0) > b.flushes) &&
      [...now.keys()].some((f) => !before.has(f) || now.get(f)!.flushes > before.get(f)!.flushes);
    if (answered || Date.now() > deadline) {
      if (!answered) console.warn('bench: not every server thread reported its GC time in 5 s');
      // Worker threads hear of the ask after the main thread: one more look lets them answer.
      await new Promise((r) => setTimeout(r, 100));
      const last = await gcFiles(prefix);
      return [...last.values()].reduce((t, v) => t + (Number.isFinite(v.ms) ? v.ms : 0), 0);
    }
  }
}

/** The WAL position and the database's clock, where the measured window starts. */
async function walLsn(url: string): Promise<{ lsn: string; at: string }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (
      await c.query<{ lsn: string; at: string }>(
        'SELECT pg_current_wal_lsn()::text AS lsn, now()::text AS at',
      )
    ).rows[0]!;
  } finally {
    await c.end();
  }
}

/** What was stored of the generator's spans: rows, distinct spans, histogram counts; WAL and table sizes. */
async function storedCounts(url: string, from: { lsn: string; at: string }) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows: size } = await c.query<{ wal: string; obs: string; hist: string }>(
      `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) AS wal,
              (SELECT sum(pg_total_relation_size(i.inhrelid)) FROM pg_inherits i
                WHERE i.inhparent = 'observations'::regclass) AS obs,
              (SELECT sum(pg_total_relation_size(i.inhrelid)) FROM pg_inherits i
                WHERE i.inhparent = 'histograms'::regclass) AS hist`,
      [from.lsn],
    );
    const { rows } = await c.query<{
      n: string;
      distinct_n: string;
      h: string | null;
      d: string | null;
      ex: string;
      hist_rows: string;
      dur_rows: string;
    }>(
      `SELECT (SELECT count(*) FROM observations WHERE substring(trace_id FROM 9) = $1) AS n,
              (SELECT count(*) FILTER (WHERE exemplar)::float8 / greatest(count(*), 1)
                 FROM observations WHERE received_at >= $3) AS ex,
              (SELECT count(*)::float8 / greatest((SELECT count(*) FROM observations), 1)
                 FROM histograms) AS hist_rows,
              (SELECT count(*)::float8 / greatest((SELECT count(*) FROM observations), 1)
                 FROM span_durations) AS dur_rows,
              (SELECT count(*) FROM (SELECT DISTINCT trace_id, span_id FROM observations
                                      WHERE substring(trace_id FROM 9) = $1) d) AS distinct_n,
              (SELECT sum(h.count) FROM histograms h JOIN series s ON s.id = h.series_id
                WHERE s.service = ANY($2::text[])) AS h,
              (SELECT sum(cardinality(sd.durations)) FROM span_durations sd JOIN series s ON s.id = sd.series_id
                WHERE s.service = ANY($2::text[])) AS d`,
      [MARK_TAIL, loadServices(LOAD), from.at],
    );
    const r = rows[0]!;
    return {
      rows: Number(r.n),
      distinct: Number(r.distinct_n),
      histogram: Number(r.h ?? 0),
      durations: Number(r.d ?? 0),
      exemplars: Number(r.ex),
      histogramRows: Number(r.hist_rows),
      durationRows: Number(r.dur_rows),
      walBytes: Number(size[0]!.wal),
      observationsBytes: Number(size[0]!.obs),
      histogramsBytes: Number(size[0]!.hist),
    };
  } finally {
    await c.end();
  }
}

/** The statements PostgreSQL spent most time on during the run (BENCH_PG_STATS=1). */
async function printStatements(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ calls: number; ms: number; rows: number; q: string }>(
      `SELECT calls::int, round(total_exec_time)::float8 AS ms, rows::float8 AS rows,
              regexp_replace(left(query, 140), '\\s+', ' ', 'g') AS q
         FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'
        ORDER BY total_exec_time DESC LIMIT 15`,
    );
    console.log('bench/ingest: costliest statements (pg_stat_statements, exec time)');
    for (const r of rows) console.log(`  ${r.ms} ms  ${r.calls} calls  ${r.rows} rows  ${r.q}`);
  } finally {
    await c.end();
  }
}

async function resetStatements(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await c.query('SELECT pg_stat_statements_reset()');
  } finally {
    await c.end();
  }
}

const envOf = (v: string | undefined): Record<string, string> =>
  Object.fromEntries(
    (v ?? '')
      .split(' ')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
const THIS_ENV = envOf(process.env.BENCH_ENV);
const COMPARE_ENV = envOf(process.env.BENCH_COMPARE_ENV);
/** A run's build and settings, as the results name it. */
const label = (root: string, env: Record<string, string>) =>
  [root, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)].join(' ');

async function runOnce(root: string, settings: Record<string, string> = {}): Promise<RunResult> {
  // "PG:name=value" entries are PostgreSQL settings of the run's database, the rest server env.
  const env = Object.fromEntries(Object.entries(settings).filter(([k]) => !k.startsWith('PG:')));
  const pgSettings = Object.entries(settings)
    .filter(([k]) => k.startsWith('PG:'))
    .map(([k, v]) => `${k.slice(3)}=${v}`);
  const { db, url, dataDir } = await benchDatabase([
    ...(PG_STATS
      ? ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all']
      : []),
    ...pgSettings,
  ]);
  const gcPrefix = path.join(await mkdtemp(path.join(os.tmpdir(), 'onset-gc-')), 'gc');
  const server = await startServerProcess(
    url,
    { ONSET_AGENT: 'off', ...env, BENCH_GC_FILE: gcPrefix },
    {
      root,
      // BENCH_SERVER_NODE_ARGS: extra flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
      nodeArgs: [
        '--import',
        GC_PROBE,
        ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
      ],
    },
  );
  const serverPid = server.proc.pid!;
  const pgPid = await postmasterPid(dataDir);
  console.log(
    `bench/ingest: server ${label(root, settings)} pid ${serverPid}, ${LOAD} load, ${WARMUP}s warm-up + ${SECONDS}s, ${CONCURRENCY} requests in flight, ${BATCH} spans each`,
  );

  let peakRss = 0;
  const sampler = setInterval(() => {
    rssMb(serverPid).then(
      (mb) => (peakRss = Math.max(peakRss, mb)),
      () => {},
    );
  }, 250);

  const gen = startLoadgen(server.otlpUrl, {
    seconds: SECONDS,
    concurrency: CONCURRENCY,
    batch: BATCH,
    load: LOAD,
    warmup: WARMUP,
  });
  await gen.warm;
  if (PG_STATS) await resetStatements(url);
  // CPU from just before the load to just after it (the generator's own start-up is idle time here).
  const wal0 = await walLsn(url);
  const serverCpu0 = processCpuSeconds(serverPid);
  const pgCpu0 = postgresCpuSeconds(pgPid);
  const gc0 = await gcMs(gcPrefix, serverPid);
  const r = await gen.done;
  const serverCpu = processCpuSeconds(serverPid) - serverCpu0;
  const pgCpu = postgresCpuSeconds(pgPid) - pgCpu0;
  const gc = (await gcMs(gcPrefix, serverPid)) - gc0;
  clearInterval(sampler);
  if (PG_STATS) await printStatements(url);
  const stored = await storedCounts(url, wal0);
  await server.stop();
  await db.stop();

  return {
    server: label(root, settings),
    load: LOAD,
    concurrency: CONCURRENCY,
    spans_per_second: Math.round(r.spans / r.seconds),
    spans: r.spans,
    failed_requests: r.failedRequests,
    seconds: Number(r.seconds.toFixed(1)),
    server_cpu_seconds: Number(serverCpu.toFixed(2)),
    postgres_cpu_seconds: Number(pgCpu.toFixed(2)),
    spans_per_server_cpu_second: Math.round(r.spans / serverCpu),
    spans_per_postgres_cpu_second: Math.round(r.spans / pgCpu),
    spans_per_cpu_second: Math.round(r.spans / (serverCpu + pgCpu)),
    request_p50_ms: Number(percentile(r.latencies, 0.5).toFixed(1)),
    request_p99_ms: Number(percentile(r.latencies, 0.99).toFixed(1)),
    server_peak_rss_mb: Math.round(peakRss),
    gc_share_of_server_cpu: Number((gc / 1000 / serverCpu).toFixed(3)),
    stored_exactly_once:
      stored.rows === r.acknowledged &&
      stored.distinct === r.acknowledged &&
      stored.histogram === r.acknowledged &&
      stored.durations === r.acknowledged,
    stored_rows: stored.rows,
    histogram_count: stored.histogram,
    durations_count: stored.durations,
    exemplar_share: Number(stored.exemplars.toFixed(3)),
    histogram_rows_per_span: Number(stored.histogramRows.toFixed(3)),
    duration_rows_per_span: Number(stored.durationRows.toFixed(3)),
    wal_bytes_per_span: Math.round(stored.walBytes / Math.max(1, r.spans)),
    observations_bytes_per_span: Math.round(stored.observationsBytes / Math.max(1, stored.rows)),
    histograms_bytes_per_span: Math.round(stored.histogramsBytes / Math.max(1, stored.rows)),
  };
}

/** Issue 33's bars, for the realistic load at 16 exports in flight. */
const BARS = {
  bar_spans_per_second: 70000,
  bar_spans_per_cpu_second: 52000,
  bar_server_rss_mb: 400,
  bar_request_p99_ms: 250,
};
const RESULT = LOAD === 'realistic' ? 'ingest' : `ingest-${LOAD}`;

if (!COMPARE) {
  const result = await runOnce(ROOT, THIS_ENV);
  console.table(result);
  console.log(`wrote ${await writeResult(RESULT, { ...result, ...BARS })}`);
} else {
  const runs: RunResult[] = [];
  for (let i = 0; i < ROUNDS; i++)
    for (const [root, env] of [
      [COMPARE, COMPARE_ENV],
      [ROOT, THIS_ENV],
    ] as const) {
      const res = await runOnce(path.resolve(root), env);
      console.table(res);
      runs.push(res);
    }
  const keys = [
    'spans_per_second',
    'spans_per_server_cpu_second',
    'spans_per_postgres_cpu_second',
    'spans_per_cpu_second',
    'request_p50_ms',
    'request_p99_ms',
    'server_peak_rss_mb',
    'gc_share_of_server_cpu',
    'wal_bytes_per_span',
    'exemplar_share',
    'histogram_rows_per_span',
    'duration_rows_per_span',
  ] as const;
  const COMPARED = label(path.resolve(COMPARE), COMPARE_ENV);
  const THIS = label(ROOT, THIS_ENV);
  if (COMPARED === THIS)
    throw new Error('BENCH_COMPARE: the two sides are the same build and settings');
  const median = (root: string, k: (typeof keys)[number]) => {
    const v = runs
      .filter((x) => x.server === root)
      .map((x) => x[k])
      .sort((a, b) => a - b);
    return (v[(v.length - 1) >> 1]! + v[v.length >> 1]!) / 2;
  };
  const summary = Object.fromEntries(
    keys.map((k) => [
      k,
      {
        compared: median(COMPARED, k),
        this: median(THIS, k),
        ratio: Number((median(THIS, k) / median(COMPARED, k)).toFixed(2)),
      },
    ]),
  );
  console.table(summary);
  console.log(
    `wrote ${await writeResult(`${RESULT}-compare`, { compared: COMPARED, this: THIS, rounds: ROUNDS, summary, runs, ...BARS })}`,
  );
}
