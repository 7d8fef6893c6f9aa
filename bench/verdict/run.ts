/**
 * bench/verdict: deploy verdicts (docs/verdicts.md) on a database with 10,000
 * series (500 services x 20 routes, 200 hosts, 4 hosts a service, 8 for the
 * canary's service; 30 minutes of minute histograms per series and host, 1.2 M rows):
 *
 *   - cost of one GET /api/v1/deploys/{id}/verdict through a real server, per method:
 *     a canary (2 of 8 hosts, one route x1.3), before/after (no hosts), and a kernel
 *     wave on 3 hosts (every series those hosts feed);
 *   - 30 such requests at once;
 *   - time from marker to verdict: decided_at - at of the failing canary, and a live
 *     ?wait on a 1-minute window: how long after its minute settled the answer came.
 *
 *   npm run bench:verdict        (SERVICES=500 ROUTES=20 REPS=20 by default)
 */
import { loadConfig } from '@onset/server/config';
import { startOnset } from '@onset/server';
import { Partitions, utcDay } from '@onset/server/internals';
import { benchDatabase, percentile, writeResult } from '../lib/harness.ts';

const SERVICES = Number(process.env.SERVICES ?? 500);
const ROUTES = Number(process.env.ROUTES ?? 20);
const REPS = Number(process.env.REPS ?? 20);
const HOSTS = 200;
const MIN = 60_000;
const log = (msg: string) => console.log(`bench/verdict: ${msg}`);

const { db, url } = await benchDatabase();
const onset = await startOnset(
  loadConfig({ ONSET_PORT: '0', ONSET_OTLP_PORT: '0', ONSET_LOG_LEVEL: 'warn', DATABASE_URL: url }),
  { scheduler: false },
);
const pool = onset.pool;
const now = Date.now();
/** The markers' time: 20 minutes of history before it, its 10-minute window after, all settled. */
const T = Math.floor(now / MIN) * MIN - 12 * MIN;
const host = (i: number) => `h-${String(i).padStart(3, '0')}`;

// --- load -----------------------------------------------------------------
let t0 = performance.now();
await pool.query(
  `INSERT INTO series (service, op, view, name)
   SELECT 'svc-' || s, 'request', 'server', 'GET /r/' || r FROM generate_series(1, $1) s, generate_series(1, $2) r`,
  [SERVICES, ROUTES],
);
// svc-1 runs on h-001..h-008; the others on 4 hosts spread over the fleet.
await pool.query(
  `INSERT INTO resources (service, host, attrs, attrs_key)
   SELECT 'svc-1', 'h-' || lpad(k::text, 3, '0'), '{}', '' FROM generate_series(1, 8) k
   UNION ALL
   SELECT DISTINCT 'svc-' || s, 'h-' || lpad((((s * 7 + k * 50) % $2) + 1)::text, 3, '0'), '{}'::jsonb, ''
     FROM generate_series(2, $1) s, generate_series(0, 3) k`,
  [SERVICES, HOSTS],
);
await pool.query(
  `INSERT INTO series_resources (series_id, resource_id)
   SELECT se.id, re.id FROM series se JOIN resources re ON re.service = se.service`,
);
const partitions = new Partitions(pool);
await partitions.ensure(
  'histograms',
  new Set([utcDay(T - 25 * MIN), utcDay(T + 15 * MIN), utcDay(now)]),
);
// ~260 calls a minute per series and host around 15-40 ms (5 buckets); svc-1's GET /r/1 x1.3
// (13 buckets of 2 %) on h-007 and h-008 from T.
await pool.query(
  `INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt)
   SELECT sr.series_id, sr.resource_id, m, 260, 260 * 20000, 10000, 60000,
          ARRAY[b, b + 1, b + 2, b + 3, b + 4], ARRAY[20, 60, 100, 60, 20]
     FROM series_resources sr
     JOIN series se ON se.id = sr.series_id
     JOIN resources re ON re.id = sr.resource_id
     CROSS JOIN generate_series($1::timestamptz, $2::timestamptz, interval '1 minute') m
     CROSS JOIN LATERAL (
       SELECT 480 + (sr.series_id % 50)::int
              + CASE WHEN se.service = 'svc-1' AND se.name = 'GET /r/1' AND re.host IN ('h-007', 'h-008')
                          AND m >= $3::timestamptz THEN 13 ELSE 0 END AS b) x`,
  [new Date(T - 20 * MIN), new Date(T + 9 * MIN), new Date(T)],
);
await pool.query('ANALYZE');
const rows = Number((await pool.query(`SELECT count(*) AS n FROM histograms`)).rows[0].n);
const seriesCount = Number((await pool.query(`SELECT count(*) AS n FROM series`)).rows[0].n);
const dbMb =
  Number((await pool.query(`SELECT pg_database_size(current_database()) AS b`)).rows[0].b) /
  2 ** 20;
const loadS = (performance.now() - t0) / 1000;
log(
  `${seriesCount} series, ${rows} histogram rows, ${dbMb.toFixed(0)} MB, loaded in ${loadS.toFixed(1)} s`,
);

async function post(body: Record<string, unknown>): Promise<string> {
  const r = await fetch(`${onset.url}/api/v1/deploys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.status !== 201) throw new Error(`POST /deploys ${r.status}: ${await r.text()}`);
  return ((await r.json()) as { id: string }).id;
}
interface Answer {
  verdict: string;
  method: string;
  decided_at: string | null;
  series_total: number;
  reason: string;
}
async function verdict(id: string, q = ''): Promise<Answer> {
  const r = await fetch(`${onset.url}/api/v1/deploys/${id}/verdict${q}`);
  if (r.status !== 200) throw new Error(`verdict ${r.status}: ${await r.text()}`);
  return (await r.json()) as Answer;
}

const at = new Date(T).toISOString();
const cases = {
  canary: await post({
    service: 'svc-1',
    hosts: ['h-007', 'h-008'],
    kind: 'code',
    to_version: '2',
    at,
  }),
  before_after: await post({ service: 'svc-2', kind: 'code', to_version: '2', at }),
  kernel_wave: await post({
    hosts: [host(1), host(2), host(3)],
    kind: 'kernel',
    to_version: '6.8',
    at,
  }),
};

// --- cost per request ----------------------------------------------------------
const perCase: Record<string, unknown> = {};
for (const [name, id] of Object.entries(cases)) {
  const first = await verdict(id);
  const times: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const t = performance.now();
    await verdict(id);
    times.push(performance.now() - t);
  }
  const p50 = percentile(times, 0.5);
  const p95 = percentile(times, 0.95);
  perCase[name] = {
    verdict: first.verdict,
    method: first.method,
    series_judged: first.series_total,
    decided_after_marker_s: first.decided_at ? (Date.parse(first.decided_at) - T) / 1000 : null,
    p50_ms: Math.round(p50 * 10) / 10,
    p95_ms: Math.round(p95 * 10) / 10,
  };
  log(
    `${name}: ${first.verdict} (${first.method}), ${first.series_total} series judged, ` +
      `${p50.toFixed(1)} ms p50 / ${p95.toFixed(1)} ms p95 per request` +
      (first.decided_at
        ? `, decided ${((Date.parse(first.decided_at) - T) / 1000).toFixed(0)} s after the marker`
        : ''),
  );
}

// --- 30 at once ---------------------------------------------------------------
t0 = performance.now();
await Promise.all(Array.from({ length: 30 }, (_, i) => verdict(Object.values(cases)[i % 3]!)));
const burstMs = performance.now() - t0;
log(`30 requests at once (10 per case): ${burstMs.toFixed(0)} ms in all`);

// --- live ?wait: a 1-minute window that settles 20 s after the current minute ends -------
const minuteStart = Math.floor(Date.now() / MIN) * MIN;
const settlesAt = minuteStart + MIN + 20_000;
await pool.query(
  `INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt)
   SELECT sr.series_id, sr.resource_id, $1, 260, 260 * 20000, 10000, 60000,
          ARRAY[b, b + 1, b + 2, b + 3, b + 4], ARRAY[20, 60, 100, 60, 20]
     FROM series_resources sr JOIN series se ON se.id = sr.series_id JOIN resources re ON re.id = sr.resource_id
     CROSS JOIN LATERAL (SELECT 480 + (sr.series_id % 50)::int + CASE WHEN se.name = 'GET /r/1' AND re.host = 'h-008' THEN 13 ELSE 0 END AS b) x
    WHERE se.service = 'svc-1'`,
  [new Date(minuteStart)],
);
const live = await post({
  service: 'svc-1',
  hosts: ['h-008'],
  kind: 'code',
  to_version: '3',
  at: new Date(minuteStart).toISOString(),
});
const asked = Date.now();
const w = await verdict(live, '?wait=3m&window=1m&min_count=100');
const answered = Date.now();
const lagMs = answered - settlesAt;
log(
  `live ?wait (1-minute window, asked ${((settlesAt - asked) / 1000).toFixed(0)} s before it settled): ` +
    `${w.verdict}, answered ${lagMs} ms after the window settled; marker to verdict ${((answered - minuteStart) / 1000).toFixed(1)} s`,
);

await writeResult('verdict', {
  series: seriesCount,
  histogram_rows: rows,
  database_mb: Math.round(dbMb),
  load_s: Math.round(loadS * 10) / 10,
  reps: REPS,
  cases: perCase,
  burst_30_ms: Math.round(burstMs),
  live_wait: {
    verdict: w.verdict,
    answered_after_settle_ms: lagMs,
    marker_to_verdict_s: (answered - minuteStart) / 1000,
    window: '1m',
  },
});
await onset.close();
await db.stop();
