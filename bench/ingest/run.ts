/**
 * bench/ingest: sustained OTLP protobuf ingest (batches of 200 spans) from a
 * load generator in a separate process into a server process on embedded
 * PostgreSQL. Prints spans/s, request p50/p99 and the server's peak RSS.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import {
  ROOT,
  benchDatabase,
  percentile,
  rssMb,
  startServerProcess,
  writeResult,
} from '../lib/harness.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

const { db, url } = await benchDatabase();
const server = await startServerProcess(url, { ONSET_AGENT: 'off' });
console.log(
  `bench/ingest: server pid ${server.proc.pid}, ${SECONDS}s, ${CONCURRENCY} requests in flight, 200 spans each`,
);

let peakRss = 0;
const sampler = setInterval(() => {
  rssMb(server.proc.pid!).then(
    (mb) => (peakRss = Math.max(peakRss, mb)),
    () => {},
  );
}, 250);

const gen = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    path.join(ROOT, 'bench/ingest/loadgen.ts'),
    server.otlpUrl,
    String(SECONDS),
    String(CONCURRENCY),
    '200',
  ],
  {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
let out = '';
gen.stdout.on('data', (d) => (out += d));
await new Promise((r) => gen.once('exit', r));
clearInterval(sampler);
const r = JSON.parse(out.trim().split('\n').at(-1)!) as {
  spans: number;
  failedRequests: number;
  seconds: number;
  latencies: number[];
};

const stored = await fetch(`${server.url}/api/v1/series`).then(
  (x) => x.json() as Promise<{ series: unknown[] }>,
);
await server.stop();
await db.stop();

const result = {
  spans_per_second: Math.round(r.spans / r.seconds),
  spans: r.spans,
  failed_requests: r.failedRequests,
  seconds: Number(r.seconds.toFixed(1)),
  request_p50_ms: Number(percentile(r.latencies, 0.5).toFixed(1)),
  request_p99_ms: Number(percentile(r.latencies, 0.99).toFixed(1)),
  server_peak_rss_mb: Math.round(peakRss),
  series: stored.series.length,
  bar_spans_per_second: 30000,
  bar_server_rss_mb: 400,
};
console.table(result);
console.log(`wrote ${await writeResult('ingest', result)}`);
