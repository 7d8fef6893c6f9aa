/**
 * bench/citus/compare: one PostgreSQL against a Citus coordinator with two workers, on this same
 * machine, in one run so that the ratios are fair (docs/scaling.md "On a Citus cluster").
 *
 * Both sides are the same system PostgreSQL 15 binary with the same settings (the Citus test
 * harness's: packages/testkit/src/citus-cluster.ts, fsync off, so this compares CPU, not disks):
 * "single" is one such node whose database has no citus extension (Onset runs there exactly as
 * on any PostgreSQL), "citus" is a coordinator and two workers with the tables distributed.
 *
 * - ingest: bench/ingest's load generator (its own process, OTLP protobuf batches of 200 spans,
 *   the realistic load, BENCH_CONCURRENCY in flight, BENCH_WARMUP s then BENCH_SECONDS s
 *   measured), alternating single / citus for BENCH_ROUNDS rounds, a fresh database each run.
 *   Spans/s, CPU seconds of the server and of every PostgreSQL node from /proc (postmaster,
 *   backends, reaped children), spans per CPU-second, request p50/p99, and every acknowledged
 *   span stored exactly once.
 * - detection: bench/detect-scale's fixture (BENCH_SERIES series, default 100,000, 5 minute
 *   histograms each, 0.25 client/server call pairs per series) and one cold run through
 *   POST /api/v1/detect (pairing, inference, the cold pass over every series), then one
 *   incremental run; wall time and CPU per node.
 *
 *   node --import tsx bench/citus/compare.ts     (writes bench/results/citus-compare.json)
 *
 * BENCH_WRITERS=n sets ONSET_INGEST_WRITERS on both sides (results: citus-compare-writers<n>.json);
 * BENCH_PARTS=ingest or detect runs one part. BENCH_CITUS_SETTINGS="name=value …" sets Citus
 * settings on the cluster's database (e.g. citus.max_cached_conns_per_worker=8).
 *
 * Other work on the machine adds noise: read the ratios between the two sides of one run.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { startCitusCluster, type CitusCluster, type CitusNode } from '@onset/testkit/citus';
import { migrate } from '@onset/server/internals';
import { distributeTables } from '../../apps/server/src/db/citus.ts';
import { percentile, startServerProcess, writeResult, type ServerProcess } from '../lib/harness.ts';
import { startLoadgen } from '../ingest/loadgen-process.ts';
import { postgresCpuSeconds, processCpuSeconds } from '../ingest/cpu.ts';
import { loadServices, MARK_TAIL } from '../ingest/loads.ts';
import { buildFixture } from '../detect-scale/fixture.ts';
import { callJson as call } from '../lib/call.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SERIES = Number(process.env.BENCH_SERIES ?? 100_000);
const PARTS = (process.env.BENCH_PARTS ?? 'ingest,detect').split(',');
/** ONSET_INGEST_WRITERS of the servers on both sides (ingest transactions in flight); default the server's. */
const WRITERS = process.env.BENCH_WRITERS;
/** Settings for Onset's database on the coordinator, "name=value name=value" (e.g. citus.max_cached_conns_per_worker=8). */
const CITUS_SETTINGS = (process.env.BENCH_CITUS_SETTINGS ?? '')
  .split(' ')
  .filter(Boolean)
  .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const);
const BATCH = 200;
const LOAD = 'realistic';
const MIN = 60_000;

type Kind = 'single' | 'citus';
const log = (msg: string) => console.log(`bench/citus: ${msg}`);
const r2 = (x: number) => Number(x.toFixed(2));

interface Target {
  kind: Kind;
  url: string;
  cluster: CitusCluster;
  nodes: CitusNode[];
}

async function startTarget(kind: Kind): Promise<Target> {
  const cluster = await startCitusCluster({ workers: kind === 'citus' ? 2 : 0 });
  let url: string;
  if (kind === 'citus') {
    url = await cluster.createDatabase('onset');
    const c = new pg.Client(url);
    await c.connect();
    for (const [k, v] of CITUS_SETTINGS)
      await c.query(`ALTER DATABASE ${new URL(url).pathname.slice(1)} SET ${k} = '${v}'`);
    await c.end();
  } else {
    const c = new pg.Client(cluster.coordinator.url());
    await c.connect();
    await c.query('CREATE DATABASE onset');
    await c.end();
    url = cluster.coordinator.url('onset');
  }
  return { kind, url, cluster, nodes: [cluster.coordinator, ...cluster.workers] };
}

async function postmasterPid(node: CitusNode): Promise<number> {
  return Number((await readFile(path.join(node.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

/** CPU seconds so far of each node (coordinator first), and of the server. */
async function cpuNow(t: Target, serverPid: number): Promise<{ server: number; nodes: number[] }> {
  const pids = await Promise.all(t.nodes.map(postmasterPid));
  return { server: processCpuSeconds(serverPid), nodes: pids.map(postgresCpuSeconds) };
}

function cpuDelta(a: { server: number; nodes: number[] }, b: { server: number; nodes: number[] }) {
  const nodes = b.nodes.map((x, i) => r2(x - a.nodes[i]!));
  const pgTotal = nodes.reduce((s, x) => s + x, 0);
  return {
    server_cpu_seconds: r2(b.server - a.server),
    postgres_cpu_seconds: r2(pgTotal),
    /** Coordinator first, then the workers. */
    postgres_cpu_seconds_per_node: nodes,
    total_cpu_seconds: r2(b.server - a.server + pgTotal),
  };
}

/** Transactions committed and sessions opened so far in Onset's database on each node (coordinator first). */
async function countersNow(t: Target): Promise<Array<{ commits: number; sessions: number }>> {
  const database = new URL(t.url).pathname.slice(1);
  return Promise.all(
    t.nodes.map(async (n) => {
      const c = new pg.Client(n.url(database));
      await c.connect();
      try {
        const { rows } = await c.query<{ commits: string; sessions: string }>(
          `SELECT xact_commit::text AS commits, sessions::text AS sessions
             FROM pg_stat_database WHERE datname = current_database()`,
        );
        return { commits: Number(rows[0]!.commits), sessions: Number(rows[0]!.sessions) };
      } finally {
        await c.end();
      }
    }),
  );
}

async function ingestRun(kind: Kind): Promise<Record<string, unknown>> {
  const t = await startTarget(kind);
  try {
    const server = await startServerProcess(t.url, {
      ONSET_AGENT: 'off',
      ...(WRITERS ? { ONSET_INGEST_WRITERS: WRITERS } : {}),
    });
    try {
      return await ingestLoad(t, server);
    } finally {
      await server.stop();
    }
  } finally {
    await t.cluster.stop();
  }
}

async function ingestLoad(t: Target, server: ServerProcess): Promise<Record<string, unknown>> {
  const kind = t.kind;
  const serverPid = server.proc.pid!;
  log(`ingest on ${kind}: ${WARMUP}s warm-up + ${SECONDS}s, ${CONCURRENCY} in flight`);
  const gen = startLoadgen(server.otlpUrl, {
    seconds: SECONDS,
    concurrency: CONCURRENCY,
    batch: BATCH,
    load: LOAD,
    warmup: WARMUP,
  });
  await gen.warm;
  const counters0 = await countersNow(t);
  const cpu0 = await cpuNow(t, serverPid);
  const r = await gen.done;
  const cpu1 = await cpuNow(t, serverPid);
  const counters = (await countersNow(t)).map((x, i) => ({
    commits: x.commits - counters0[i]!.commits,
    sessions: x.sessions - counters0[i]!.sessions,
  }));
  const commits = counters.map((x) => x.commits);
  await new Promise((res) => setTimeout(res, 1000)); // group commits in flight land
  const c = new pg.Client(t.url);
  await c.connect();
  const { rows } = await c.query<{ n: string; distinct_n: string; h: string | null }>(
    `SELECT (SELECT count(*) FROM observations WHERE substring(trace_id FROM 9) = $1) AS n,
            (SELECT count(*) FROM (SELECT DISTINCT trace_id, span_id FROM observations
                                    WHERE substring(trace_id FROM 9) = $1) d) AS distinct_n,
            (SELECT sum(h.count) FROM histograms h JOIN series s ON s.id = h.series_id
              WHERE s.service = ANY($2::text[])) AS h`,
    [MARK_TAIL, loadServices(LOAD)],
  );
  await c.end();
  const cpu = cpuDelta(cpu0, cpu1);
  const stored = {
    rows: Number(rows[0]!.n),
    distinct: Number(rows[0]!.distinct_n),
    histogram: Number(rows[0]!.h ?? 0),
  };
  const res = {
    target: kind,
    spans_per_second: Math.round(r.spans / r.seconds),
    spans: r.spans,
    failed_requests: r.failedRequests,
    seconds: r2(r.seconds),
    ...cpu,
    spans_per_server_cpu_second: Math.round(r.spans / cpu.server_cpu_seconds),
    spans_per_postgres_cpu_second: Math.round(r.spans / cpu.postgres_cpu_seconds),
    spans_per_cpu_second: Math.round(r.spans / cpu.total_cpu_seconds),
    request_p50_ms: r2(percentile(r.latencies, 0.5)),
    request_p99_ms: r2(percentile(r.latencies, 0.99)),
    /** Transactions committed per node (coordinator first) in the measured window. */
    commits_per_node: commits,
    spans_per_coordinator_commit: Math.round(r.spans / Math.max(1, commits[0]!)),
    /** Sessions (backends) started per node in the window: the coordinator's connections to the workers included. */
    sessions_per_node: counters.map((x) => x.sessions),
    acknowledged: r.acknowledged,
    stored_rows: stored.rows,
    stored_exactly_once:
      stored.rows === r.acknowledged &&
      stored.distinct === r.acknowledged &&
      stored.histogram === r.acknowledged,
  };
  log(`ingest on ${kind}: ${JSON.stringify(res)}`);
  return res;
}

interface DetectAnswer {
  pairing: { pairs: number; edges: number };
  detection: {
    duration_ms: number;
    series: { total: number; new: number; fed: number; points: number };
  };
}

async function detectRun(kind: Kind): Promise<Record<string, unknown>> {
  const t = await startTarget(kind);
  try {
    await migrate(t.url);
    if (kind === 'citus') await distributeTables(t.url);
    const end = Math.floor(Date.now() / MIN) * MIN - MIN;
    const t0 = performance.now();
    const fix = await buildFixture(t.url, SERIES, end, {
      points: 5,
      callsPerSeries: 0.25,
      log: (m) => log(`${kind}: ${m}`),
    });
    const fixtureSeconds = r2((performance.now() - t0) / 1000);
    const server = await startServerProcess(t.url, {
      ONSET_AGENT: 'off',
      ONSET_MAX_SERIES: '10000000',
      ONSET_MAX_SERIES_PER_SERVICE: '10000000',
      // No scheduled pass in the way of the timed ones (the first comes an hour after the start).
      ONSET_DETECT_INTERVAL: '1h',
    });
    const pid = server.proc.pid!;
    try {
      const cpu0 = await cpuNow(t, pid);
      const c0 = performance.now();
      const cold = await call<DetectAnswer>('POST', `${server.url}/api/v1/detect`, {});
      const coldMs = performance.now() - c0;
      const cpu1 = await cpuNow(t, pid);
      const i0 = performance.now();
      const inc = await call<DetectAnswer>('POST', `${server.url}/api/v1/detect`, {});
      const incMs = performance.now() - i0;
      const cpu2 = await cpuNow(t, pid);
      const res = {
        target: kind,
        series: SERIES,
        fixture: { ...fix, seconds: fixtureSeconds },
        cold_run: {
          seconds: r2(coldMs / 1000),
          detection_seconds: r2(cold.detection.duration_ms / 1000),
          pairing_and_inference_seconds: r2((coldMs - cold.detection.duration_ms) / 1000),
          series_total: cold.detection.series.total,
          series_new: cold.detection.series.new,
          points: cold.detection.series.points,
          pairs: cold.pairing.pairs,
          edges: cold.pairing.edges,
          ...cpuDelta(cpu0, cpu1),
        },
        incremental_run: {
          seconds: r2(incMs / 1000),
          detection_seconds: r2(inc.detection.duration_ms / 1000),
          ...cpuDelta(cpu1, cpu2),
        },
      };
      log(`detect on ${kind}: ${JSON.stringify(res)}`);
      return res;
    } finally {
      await server.stop();
    }
  } finally {
    await t.cluster.stop();
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2;
};

const ingest: Array<Record<string, unknown>> = [];
if (PARTS.includes('ingest'))
  for (let i = 0; i < ROUNDS; i++)
    for (const k of ['single', 'citus'] as const) ingest.push(await ingestRun(k));
const detect: Array<Record<string, unknown>> = [];
if (PARTS.includes('detect'))
  for (const k of ['single', 'citus'] as const) detect.push(await detectRun(k));

const keys = [
  'spans_per_second',
  'spans_per_cpu_second',
  'spans_per_server_cpu_second',
  'spans_per_postgres_cpu_second',
  'request_p50_ms',
  'request_p99_ms',
] as const;
const summary = ingest.length
  ? Object.fromEntries(
      keys.map((k) => {
        const of = (kind: Kind) =>
          median(ingest.filter((r) => r.target === kind).map((r) => r[k] as number));
        return [
          k,
          { single: of('single'), citus: of('citus'), ratio: r2(of('citus') / of('single')) },
        ];
      }),
    )
  : {};
if (ingest.length) console.table(summary);
log(
  `wrote ${await writeResult(
    process.env.BENCH_RESULT ?? (WRITERS ? `citus-compare-writers${WRITERS}` : 'citus-compare'),
    {
      settings: {
        writers: WRITERS ?? 'default',
        citus_settings: Object.fromEntries(CITUS_SETTINGS),
        seconds: SECONDS,
        warmup: WARMUP,
        concurrency: CONCURRENCY,
        rounds: ROUNDS,
        load: LOAD,
        batch: BATCH,
      },
      ingest_summary: summary,
      ingest,
      detect,
    },
  )}`,
);
