/**
 * bench/slo/count.ts: the SLO pass's counting step, before and after it read
 * `span_durations` instead of raw `observations` rows. One database holds a
 * minute of ingest as the server stores it (every span's raw row, and one
 * sorted durations array per (series, resource, start minute) per ingest
 * transaction), plus the minute before; both statements count the newest
 * minute into 1,000 SLOs' counters, interleaved, each inside a transaction
 * that is rolled back so every run counts the same spans. Prints wall time and
 * the PostgreSQL backend's CPU time per run (medians and ratio), checks both
 * produce the same counters, writes bench/results/slo-count.json.
 *
 *   node --import tsx bench/slo/count.ts
 *   (SPANS=1200000 per minute, SERVICES=250, SERIES=20 per service, HOSTS=4, BATCH=200
 *    spans per request, TX_REQUESTS=4 requests per ingest transaction, ROUNDS=5)
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { COUNT_SQL, createPool, migrate, Partitions, utcDay } from '@onset/server/internals';
import { benchDatabase, percentile, writeResult } from '../lib/harness.ts';

const SPANS = Number(process.env.SPANS ?? 1_200_000);
const SERVICES = Number(process.env.SERVICES ?? 250);
const SERIES = Number(process.env.SERIES ?? 20);
const HOSTS = Number(process.env.HOSTS ?? 4);
const BATCH = Number(process.env.BATCH ?? 200);
const TX_REQUESTS = Number(process.env.TX_REQUESTS ?? 4);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const MIN = 60_000;

/**
 * The counting statement before this change (apps/server/src/slos/store.ts at
 * 2a2725c^): one `observations` row per span, matched to every SLO of its series.
 */
const BEFORE_SQL = `WITH m AS (
       SELECT o.id AS slo_id, s.id AS series_id, o.threshold_us FROM slos o JOIN series s ON s.service = o.service
  AND (o.op IS NULL OR s.op = o.op) AND (o.view IS NULL OR s.view = o.view)
  AND (o.peer IS NULL OR s.peer = o.peer) AND (o.series_id IS NULL OR s.id = o.series_id)
  AND (o.name_match IS NULL OR s.name ~ o.name_match)
     ), agg AS (
       SELECT m.slo_id, date_trunc('minute', ob.start_time, 'UTC') AS minute,
              count(*) FILTER (WHERE ob.duration_us <= m.threshold_us) AS good, count(*) AS total
         FROM observations ob JOIN m ON m.series_id = ob.series_id
        WHERE ob.received_day BETWEEN $3::date AND $4::date AND ob.received_at > $1 AND ob.received_at <= $2
        GROUP BY 1, 2
     ), mins AS (
       INSERT INTO slo_minutes (slo_id, minute, good, total)
       SELECT slo_id, minute, good, total FROM agg WHERE minute >= $5
       ON CONFLICT (slo_id, minute) DO UPDATE SET good = slo_minutes.good + EXCLUDED.good, total = slo_minutes.total + EXCLUDED.total
       RETURNING 1
     ), hours AS (
       INSERT INTO slo_hours (slo_id, hour, good, total)
       SELECT slo_id, date_trunc('hour', minute, 'UTC'), sum(good), sum(total) FROM agg GROUP BY 1, 2
       ON CONFLICT (slo_id, hour) DO UPDATE SET good = slo_hours.good + EXCLUDED.good, total = slo_hours.total + EXCLUDED.total
     ), days AS (
       INSERT INTO slo_days (slo_id, day, good, total)
       SELECT slo_id, date_trunc('day', minute, 'UTC'), sum(good), sum(total) FROM agg GROUP BY 1, 2
       ON CONFLICT (slo_id, day) DO UPDATE SET good = slo_days.good + EXCLUDED.good, total = slo_days.total + EXCLUDED.total
     )
     SELECT count(*)::int AS n FROM mins`;

const log = (msg: string) => console.log(`bench/slo/count: ${msg}`);
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const load = () => os.loadavg()[0]!.toFixed(1);

const { db, url } = await benchDatabase();
await migrate(url);
const pool = createPool(url, 4);
const partitions = new Partitions(pool);
const now = Date.now();
// The counted minute ends a minute ago; the one before it is also stored.
const minuteStart = Math.floor(now / MIN) * MIN - 2 * MIN;
const day = utcDay(minuteStart);
await partitions.ensure('observations', [utcDay(minuteStart - MIN), day]);
await partitions.ensure('span_durations', [utcDay(minuteStart - MIN), day]);

// --- load -----------------------------------------------------------------
const t = performance.now();
await pool.query(
  `INSERT INTO series (service, op, view, name)
   SELECT 'svc-' || s, CASE WHEN j % 4 = 3 THEN 'other' ELSE 'request' END, CASE WHEN j % 5 = 4 THEN 'client' ELSE 'server' END,
          'GET /item/' || j
     FROM generate_series(1, $1) s, generate_series(1, $2) j ORDER BY s, j`,
  [SERVICES, SERIES],
);
await pool.query(
  `INSERT INTO resources (service, host, attrs, attrs_key)
   SELECT 'svc-' || s, 'host-' || h, '{}', '' FROM generate_series(1, $1) s, generate_series(1, $2) h ORDER BY s, h`,
  [SERVICES, HOSTS],
);
// Four SLOs a service: the whole service, one op, one series, a name pattern.
await pool.query(
  `INSERT INTO slos (name, service, op, view, series_id, name_match, threshold_us, objective, window_text, window_kind, window_ms)
   SELECT 'slo ' || s || '/' || k, 'svc-' || s,
          CASE WHEN k = 2 THEN 'request' END, CASE WHEN k = 2 THEN 'server' END,
          CASE WHEN k = 3 THEN (s - 1) * $2 + 1 END, CASE WHEN k = 4 THEN '/item/1' END,
          (ARRAY[100000, 50000, 250000, 20000])[k], 0.99, '28d', 'rolling', 28 * 86400000::int8
     FROM generate_series(1, $1) s, generate_series(1, 4) k`,
  [SERVICES, SERIES],
);
const requests = Math.round(SPANS / BATCH);
const txs = Math.ceil(requests / TX_REQUESTS);
/** One minute of ingest: each request is BATCH spans of one (service, host) over its series. */
async function storeMinute(start: number): Promise<void> {
  // Durations arrays: one per (request, series), received at its transaction's time.
  await pool.query(
    `INSERT INTO span_durations (received_day, received_at, series_id, minute, durations, sorted)
     SELECT $1::date, ra, (svc - 1) * $5 + j, date_trunc('minute', ra - interval '4 seconds' * random(), 'UTC'),
            ARRAY(SELECT 2000 + 400000 * random() ^ 4 AS us FROM generate_series(1, $4 / $5 + 0 * r * j) ORDER BY us),
            true
       FROM (SELECT r, 1 + r % $6 AS svc,
                    to_timestamp(($2::float8 + (floor(r / $7) + 0.5) * 60000.0 / $8) / 1000) AS ra
               FROM generate_series(0, $3 - 1) r) q,
            generate_series(1, $5) j`,
    [utcDay(start), start, requests, BATCH, SERIES, SERVICES, TX_REQUESTS, txs],
  );
  // The same spans' raw rows.
  await pool.query(
    `INSERT INTO observations (received_day, received_at, trace_id, span_id, series_id, resource_id, start_time, duration_us, kind)
     SELECT sd.received_day, sd.received_at, decode(md5(random()::text), 'hex'), substr(decode(md5(random()::text), 'hex'), 1, 8),
            sd.series_id, 1, sd.minute + interval '59 seconds' * random(), d.us, 2
       FROM span_durations sd, unnest(sd.durations) AS d(us)
      WHERE sd.received_at >= $1 AND sd.received_at < $2
      ORDER BY sd.received_at`,
    [new Date(start), new Date(start + MIN)],
  );
}
await storeMinute(minuteStart - MIN);
await storeMinute(minuteStart);
// Settled as autovacuum leaves an insert-only table: statistics, BRIN ranges summarized.
await pool.query('VACUUM ANALYZE');
const sizes = (
  await pool.query<{ obs: string; sd: string; sd_rows: string }>(
    `SELECT (SELECT count(*) FROM observations WHERE received_at >= $1) AS obs,
            (SELECT sum(cardinality(durations)) FROM span_durations WHERE received_at >= $1) AS sd,
            (SELECT count(*) FROM span_durations WHERE received_at >= $1) AS sd_rows`,
    [new Date(minuteStart)],
  )
).rows[0]!;
log(
  `loaded ${SERVICES * SERIES} series, ${SERVICES * 4} SLOs; the counted minute: ${sizes.obs} raw rows, ` +
    `${sizes.sd} durations in ${sizes.sd_rows} arrays (${requests} requests of ${BATCH} spans, ${txs} transactions); ` +
    `${secs(performance.now() - t)}, load ${load()}`,
);

// --- measure ----------------------------------------------------------------
const c = await pool.connect();
const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
const tickMs = 1000 / 100; // USER_HZ
async function cpuMs(): Promise<number> {
  const f = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * tickMs;
}
const params = [
  new Date(minuteStart - 1),
  new Date(minuteStart + MIN),
  utcDay(minuteStart - 86_400_000),
  utcDay(minuteStart + 86_400_000),
  new Date(minuteStart - 3 * 86_400_000),
];
const variants = { before: BEFORE_SQL, after: COUNT_SQL } as const;
type Variant = keyof typeof variants;
const runs: Record<Variant, Array<{ ms: number; cpu_ms: number; load: number }>> = {
  before: [],
  after: [],
};
const checks: Partial<Record<Variant, string>> = {};

async function runOnce(v: Variant): Promise<void> {
  await c.query('BEGIN');
  try {
    const cpu0 = await cpuMs();
    const t0 = performance.now();
    await c.query(variants[v], params);
    const ms = performance.now() - t0;
    const cpu = (await cpuMs()) - cpu0;
    const sum = await c.query<{ h: string; n: string; total: string }>(
      `SELECT md5(string_agg(slo_id || ' ' || minute || ' ' || good || ' ' || total, ',' ORDER BY slo_id, minute)) AS h,
              count(*) AS n, sum(total) AS total FROM slo_minutes`,
    );
    checks[v] ??=
      `${sum.rows[0]!.n} SLO-minutes, ${sum.rows[0]!.total} spans counted, md5 ${sum.rows[0]!.h}`;
    runs[v].push({ ms, cpu_ms: cpu, load: os.loadavg()[0]! });
    log(`${v.padEnd(6)} ${secs(ms)}, backend CPU ${secs(cpu)} (load ${load()})`);
  } finally {
    await c.query('ROLLBACK');
  }
}

await runOnce('after'); // warm both once, not counted
await runOnce('before');
runs.before.length = 0;
runs.after.length = 0;
for (let i = 0; i < ROUNDS; i++)
  for (const v of i % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const))
    await runOnce(v);
c.release();

const med = (v: Variant, k: 'ms' | 'cpu_ms') =>
  percentile(
    runs[v].map((r) => r[k]),
    0.5,
  );
const same = checks.before === checks.after;
log(`before: ${checks.before}`);
log(`after:  ${checks.after}`);
log(same ? 'identical counters' : 'COUNTERS DIFFER');
log(
  `median wall ${secs(med('before', 'ms'))} -> ${secs(med('after', 'ms'))} (${(med('after', 'ms') / med('before', 'ms')).toFixed(2)}x), ` +
    `backend CPU ${secs(med('before', 'cpu_ms'))} -> ${secs(med('after', 'cpu_ms'))} (${(med('after', 'cpu_ms') / med('before', 'cpu_ms')).toFixed(2)}x)`,
);
const file = await writeResult('slo-count', {
  load: {
    spans_per_minute: Number(sizes.obs),
    durations_arrays: Number(sizes.sd_rows),
    series: SERVICES * SERIES,
    slos: SERVICES * 4,
    requests_per_minute: requests,
    transactions_per_minute: txs,
  },
  rounds: ROUNDS,
  runs,
  median: {
    before: { ms: med('before', 'ms'), cpu_ms: med('before', 'cpu_ms') },
    after: { ms: med('after', 'ms'), cpu_ms: med('after', 'cpu_ms') },
    ratio_ms: med('after', 'ms') / med('before', 'ms'),
    ratio_cpu: med('after', 'cpu_ms') / med('before', 'cpu_ms'),
  },
  counters: checks,
  identical: same,
});
log(`wrote ${file}`);
await pool.end();
await db.stop();
if (!same) process.exitCode = 1;
