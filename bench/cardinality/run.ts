/**
 * bench/cardinality: hostile cardinality against a server process with the
 * default limits (docs/api.md "Cardinality limits"). Four phases of 200,000
 * distinct values each — span names, hosts and resource attribute values
 * of one service, then services — sent as OTLP JSON
 * in batches of 5,000 spans, 4 requests in flight. After each phase: server
 * RSS (peak and now), database size, series and resources created, drops
 * and folds (/api/v1/limits), and GET /api/v1/series latency (p50/p95/max of
 * 20 calls, unfiltered and for one service). Writes bench/results/cardinality.json.
 *
 *   npm run bench:cardinality            (BENCH_VALUES=200000 BENCH_BATCH=5000 BENCH_CONCURRENCY=4)
 */
import pg from 'pg';
import type { CardinalityStatus } from '@onset/contract';
import {
  benchDatabase,
  percentile,
  rssMb,
  startServerProcess,
  writeResult,
} from '../lib/harness.ts';

const VALUES = Number(process.env.BENCH_VALUES ?? 200_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 5_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);

interface SpanSpec {
  service: string;
  host: string;
  attr?: string;
  name: string;
}

/** Letters only (route templating keeps them apart): 0 -> aaaa, 1 -> aaab, ... */
function word(i: number): string {
  let s = '';
  do {
    s = String.fromCharCode(97 + (i % 26)) + s;
    i = Math.floor(i / 26);
  } while (i > 0);
  return s.padStart(4, 'a');
}

let seq = 0;
const hex = (bytes: number, n: number) => n.toString(16).padStart(bytes * 2, '0');

function body(spans: SpanSpec[]): string {
  const groups = new Map<string, SpanSpec[]>();
  for (const s of spans) {
    const k = `${s.service}\u0000${s.host}\u0000${s.attr ?? ''}`;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(s);
  }
  const start = (Date.now() - 120_000) * 1e6;
  return JSON.stringify({
    resourceSpans: [...groups.values()].map((g) => ({
      resource: {
        attributes: [
          { key: 'service.name', value: { stringValue: g[0]!.service } },
          { key: 'host.name', value: { stringValue: g[0]!.host } },
          ...(g[0]!.attr !== undefined
            ? [{ key: 'onset.cohort.build', value: { stringValue: g[0]!.attr } }]
            : []),
        ],
      },
      scopeSpans: [
        {
          spans: g.map((s) => {
            const i = ++seq;
            return {
              traceId: hex(16, i),
              spanId: hex(8, i),
              name: s.name,
              kind: 2,
              startTimeUnixNano: String(start + (i % 100_000) * 1000),
              endTimeUnixNano: String(start + (i % 100_000) * 1000 + 4_000_000),
            };
          }),
        },
      ],
    })),
  });
}

const { db, url } = await benchDatabase();
// BENCH_SERVER_HEAP_MB caps the server's V8 heap: surviving every phase under it shows what is retained.
const HEAP_MB = process.env.BENCH_SERVER_HEAP_MB;
const server = await startServerProcess(url, {
  ONSET_AGENT: 'off',
  ...(HEAP_MB ? { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` } : {}),
});
const pid = server.proc.pid!;
const client = new pg.Client({ connectionString: url });
await client.connect();
console.log(
  `bench/cardinality: server pid ${pid}, ${VALUES} distinct values per phase, batches of ${BATCH}, ${CONCURRENCY} in flight`,
);

let peakRss = await rssMb(pid);
const startRss = peakRss;
const sampler = setInterval(() => {
  rssMb(pid).then(
    (mb) => (peakRss = Math.max(peakRss, mb)),
    () => {},
  );
}, 250);

async function post(spans: SpanSpec[]): Promise<{ resent: number; failed: number }> {
  const payload = body(spans);
  let resent = 0;
  for (let attempt = 0; attempt < 6; attempt++) {
    const res = await fetch(`${server.otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: payload,
    });
    await res.arrayBuffer();
    if (res.status === 200) return { resent, failed: 0 };
    if (res.status !== 503 && res.status !== 429) {
      console.error(`export answered ${res.status}`);
      return { resent, failed: 1 };
    }
    resent += spans.length;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { resent, failed: 1 };
}

async function send(make: (i: number) => SpanSpec): Promise<{ resent: number; failed: number }> {
  let next = 0;
  let resent = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < VALUES) {
        const from = next;
        next = Math.min(VALUES, next + BATCH);
        const spans: SpanSpec[] = [];
        for (let i = from; i < next; i++) spans.push(make(i));
        const r = await post(spans);
        resent += r.resent;
        failed += r.failed;
      }
    }),
  );
  return { resent, failed };
}

async function latency(path: string): Promise<{ p50_ms: number; p95_ms: number; max_ms: number }> {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    const res = await fetch(`${server.url}${path}`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
    times.push(performance.now() - t);
  }
  const r = (x: number) => Number(x.toFixed(1));
  return {
    p50_ms: r(percentile(times, 0.5)),
    p95_ms: r(percentile(times, 0.95)),
    max_ms: r(Math.max(...times)),
  };
}

async function measure(
  phase: string,
  service: string,
  seconds: number,
  sent: { resent: number; failed: number },
) {
  const one = async (sql: string) => Number((await client.query(sql)).rows[0].n);
  const limits = (await (await fetch(`${server.url}/api/v1/limits`)).json()) as CardinalityStatus;
  const row = {
    phase,
    seconds: Number(seconds.toFixed(1)),
    spans_per_second: Math.round(VALUES / seconds),
    failed_requests: sent.failed,
    resent_spans: sent.resent,
    series: await one('SELECT count(*) AS n FROM series'),
    resources: await one(`SELECT count(*) AS n FROM resources WHERE NOT attrs ? 'onset.overflow'`),
    overflow_resources: await one(
      `SELECT count(*) AS n FROM resources WHERE attrs ? 'onset.overflow'`,
    ),
    dropped_series_service_limit: limits.dropped.series.service_limit,
    dropped_series_global_limit: limits.dropped.series.global_limit,
    folded_resource_service_limit: limits.dropped.resource.service_limit,
    folded_resource_global_limit: limits.dropped.resource.global_limit,
    db_size_mb: Math.round(
      (await one('SELECT pg_database_size(current_database()) AS n')) / 2 ** 20,
    ),
    server_rss_mb: Math.round(await rssMb(pid)),
    server_peak_rss_mb: Math.round(peakRss),
    series_list: await latency('/api/v1/series'),
    series_list_one_service: await latency(`/api/v1/series?service=${encodeURIComponent(service)}`),
  };
  console.log(JSON.stringify(row));
  return row;
}

/** A series of the first phase that was admitted (which ones win the race for the 2,000 slots varies). */
let admitted = '';
// Hosts and attribute values go to the service of the first phase (its series exist), so they
// meet the per-service resource limit; new services come last and meet the global limits.
const phases: Array<{ phase: string; service: string; make: (i: number) => SpanSpec }> = [
  {
    phase: 'span_names',
    service: 'catalog',
    make: (i) => ({ service: 'catalog', host: 'node-1', name: `GET /item-${word(i)}` }),
  },
  {
    phase: 'hosts',
    service: 'catalog',
    make: (i) => ({ service: 'catalog', host: `host-${word(i)}`, name: admitted }),
  },
  {
    phase: 'attribute_values',
    service: 'catalog',
    make: (i) => ({
      service: 'catalog',
      host: 'node-1',
      attr: `build-${word(i)}`,
      name: admitted,
    }),
  },
  {
    phase: 'services',
    service: 'svc-aaaa',
    make: (i) => ({ service: `svc-${word(i)}`, host: 'node-1', name: 'GET /' }),
  },
];

const rows = [];
for (const p of phases) {
  if (!admitted && rows.length)
    admitted = (
      await client.query(`SELECT name FROM series WHERE service = 'catalog' ORDER BY name LIMIT 1`)
    ).rows[0].name;
  const t = performance.now();
  const sent = await send(p.make);
  rows.push(await measure(p.phase, p.service, (performance.now() - t) / 1000, sent));
}
clearInterval(sampler);
const limits = (await (await fetch(`${server.url}/api/v1/limits`)).json()) as CardinalityStatus;
await client.end();
await server.stop();
await db.stop();

const result = {
  values_per_phase: VALUES,
  server_heap_cap_mb: HEAP_MB ? Number(HEAP_MB) : null,
  batch: BATCH,
  concurrency: CONCURRENCY,
  limits: { series: limits.series, resources: limits.resources },
  server_start_rss_mb: Math.round(startRss),
  server_peak_rss_mb: Math.round(peakRss),
  phases: rows,
  bar_server_rss_mb: 512,
  bar_series_list_ms: 500,
};
console.table(
  rows.map((r) => ({
    phase: r.phase,
    series: r.series,
    resources: r.resources,
    dropped: r.dropped_series_service_limit + r.dropped_series_global_limit,
    folded: r.folded_resource_service_limit + r.folded_resource_global_limit,
    db_mb: r.db_size_mb,
    rss_mb: r.server_rss_mb,
    peak_rss_mb: r.server_peak_rss_mb,
    list_p95_ms: r.series_list.p95_ms,
    list_one_p95_ms: r.series_list_one_service.p95_ms,
  })),
);
console.log(
  `wrote ${await writeResult(HEAP_MB ? `cardinality-heap${HEAP_MB}` : 'cardinality', result)}`,
);
