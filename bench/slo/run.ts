/**
 * bench/slo: 1,000 SLOs over 28 days of counters; time and memory of one SLO
 * evaluation pass (count the newest spans, evaluate every SLO's seven burn
 * windows and its compliance window, move alerts, write the outbox), then a
 * delivery pass to a local receiver. First bar: < 5 s per pass.
 *
 *   node --import tsx bench/slo/run.ts            (SLOS=1000 DAYS=28 by default)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  countNewObservations,
  createPool,
  evaluateSlos,
  listSlos,
  migrate,
  Partitions,
  runDeliveryPass,
  runSloPass,
  utcDay,
} from '@onset/server/internals';
import { benchDatabase, writeResult } from '../lib/harness.ts';

// The receiver below is on loopback, which the webhook egress policy refuses unless permitted.
process.env.ONSET_WEBHOOK_ALLOW ??= '127.0.0.1';

const SLOS = Number(process.env.SLOS ?? 1000);
const DAYS = Number(process.env.DAYS ?? 28);
const BURNING_EVERY = 20; // every 20th SLO burns in the last 70 minutes -> 50 pages
const SPANS_LAST_MINUTE = Number(process.env.SPANS ?? 60_000);
const TARGET_MS = 5000;
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const log = (msg: string) => console.log(`bench/slo: ${msg}`);
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const { db, url } = await benchDatabase();
await migrate(url);
const pool = createPool(url, 8);
const partitions = new Partitions(pool);
const now = Date.now();
const end = Math.floor(now / MIN) * MIN;
const minuteStart = end - (3 * DAY + 2 * HOUR);
const hourStart = Math.floor((end - DAYS * DAY - DAY) / HOUR) * HOUR;

// --- load -----------------------------------------------------------------
let t = performance.now();
await pool.query(
  `INSERT INTO series (service, op, view, name) SELECT 'svc-' || i, 'request', 'server', 'GET /item/' || i FROM generate_series(1, $1) i`,
  [SLOS],
);
// A mix of windows: mostly 28 d, some 30 d, 7 d and calendar months.
await pool.query(
  `INSERT INTO slos (name, service, op, view, threshold_us, objective, window_text, window_kind, window_ms, calendar_unit, time_zone, exact_since)
   SELECT 'slo ' || i, 'svc-' || i, 'request', 'server', 100000, 0.99,
          CASE WHEN i % 10 = 1 THEN '30d' WHEN i % 10 = 2 THEN '7d' WHEN i % 10 = 3 THEN '1M' ELSE '28d' END,
          CASE WHEN i % 10 = 3 THEN 'calendar' ELSE 'rolling' END,
          CASE WHEN i % 10 = 1 THEN 30 * 86400000::int8 WHEN i % 10 = 2 THEN 7 * 86400000::int8 WHEN i % 10 = 3 THEN NULL ELSE 28 * 86400000::int8 END,
          CASE WHEN i % 10 = 3 THEN 'month' END, 'UTC', now() - interval '2 days'
     FROM generate_series(1, $1) i`,
  [SLOS],
);
// Bulk load without the minute indexes, then build them once (same definitions as the migration).
await pool.query(`ALTER TABLE slo_minutes DROP CONSTRAINT slo_minutes_pkey`);
await pool.query(`DROP INDEX slo_minutes_minute`);
for (let lo = 1; lo <= SLOS; lo += 100) {
  const hi = Math.min(SLOS, lo + 99);
  // Per-minute counters for the 3-day burn windows: ~60 events/min, ~0.5% slow; burning SLOs 40% slow lately.
  await pool.query(
    `INSERT INTO slo_minutes (slo_id, minute, good, total)
     SELECT id, m, t - b, t FROM (
       SELECT o.id, m, (40 + floor(random() * 40))::int8 AS t,
              CASE WHEN o.id % $5 = 0 AND m >= $4::timestamptz - interval '70 minutes' THEN 24
                   WHEN random() < 0.3 THEN 1 ELSE 0 END::int8 AS b
         FROM slos o CROSS JOIN generate_series($3::timestamptz, $4::timestamptz, interval '1 minute') m
        WHERE o.id BETWEEN $1 AND $2) x`,
    [lo, hi, new Date(minuteStart), new Date(end), BURNING_EVERY],
  );
  // Hourly counters for the whole window: older hours generated, recent ones rolled up from the minutes.
  await pool.query(
    `INSERT INTO slo_hours (slo_id, hour, good, total)
     SELECT o.id, h, 3600 - 18, 3600 FROM slos o
       CROSS JOIN generate_series($3::timestamptz, $4::timestamptz - interval '1 hour', interval '1 hour') h
      WHERE o.id BETWEEN $1 AND $2`,
    [lo, hi, new Date(hourStart), new Date(Math.ceil(minuteStart / HOUR) * HOUR)],
  );
  await pool.query(
    `INSERT INTO slo_hours (slo_id, hour, good, total)
     SELECT slo_id, date_trunc('hour', minute, 'UTC'), sum(good), sum(total) FROM slo_minutes
      WHERE slo_id BETWEEN $1 AND $2 AND minute >= $3 GROUP BY 1, 2
     ON CONFLICT (slo_id, hour) DO NOTHING`,
    [lo, hi, new Date(Math.ceil(minuteStart / HOUR) * HOUR)],
  );
}
await pool.query(`ALTER TABLE slo_minutes ADD PRIMARY KEY (slo_id, minute) INCLUDE (good, total)`);
await pool.query(`CREATE INDEX slo_minutes_minute ON slo_minutes (minute)`);
await pool.query(
  `INSERT INTO slo_days (slo_id, day, good, total)
   SELECT slo_id, date_trunc('day', hour, 'UTC'), sum(good), sum(total) FROM slo_hours GROUP BY 1, 2`,
);
const counts = await pool.query(
  `SELECT (SELECT count(*) FROM slo_minutes) AS minutes, (SELECT count(*) FROM slo_hours) AS hours,
          (SELECT count(*) FROM slo_days) AS days`,
);
log(
  `loaded ${SLOS} SLOs: ${counts.rows[0].minutes} minute, ${counts.rows[0].hours} hour, ${counts.rows[0].days} day rows in ${secs(performance.now() - t)}`,
);

// The newest minute of raw spans, for the counting step.
await pool.query(`INSERT INTO slo_counter_state (id, cursor) VALUES (1, now())`);
await partitions.ensure('observations', [utcDay(Date.now())]);
await partitions.ensure('span_durations', [utcDay(Date.now())]);
/** A minute of spans as ingest stores them: raw rows plus their durations per series and minute. */
const insertMinute = () =>
  pool.query(
    `WITH ins AS (
       INSERT INTO observations (received_day, trace_id, span_id, series_id, resource_id, start_time, duration_us, kind)
       SELECT $2::date, decode(md5(random()::text), 'hex'), substr(decode(md5(random()::text), 'hex'), 1, 8),
              1 + (i % $3), 1, $4::timestamptz + (random() * interval '59 seconds'), 2000 + random() * 200000, 2
         FROM generate_series(1, $1) i
       RETURNING series_id, start_time, duration_us
     )
     INSERT INTO span_durations (received_day, series_id, minute, durations, sorted)
     SELECT $2::date, series_id, date_trunc('minute', start_time, 'UTC'), array_agg(duration_us ORDER BY duration_us), true
       FROM ins GROUP BY 2, 3`,
    [SPANS_LAST_MINUTE, utcDay(Date.now()), SLOS, new Date(end)],
  );
t = performance.now();
await insertMinute();
log(
  `inserted ${SPANS_LAST_MINUTE} raw spans for the newest minute in ${secs(performance.now() - t)}`,
);

// Two webhooks on a local receiver, so the pass writes a real outbox.
let received = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received++;
    res.end('ok');
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
await pool.query(
  `INSERT INTO webhooks (url, format, secret) VALUES ($1, 'json', 's'), ($1, 'alertmanager-webhook', NULL)`,
  [hookUrl],
);
await pool.query('VACUUM ANALYZE'); // as autovacuum leaves settled counters: all-visible, so index-only scans

// --- measure ----------------------------------------------------------------
async function measured<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; ms: number; heapDeltaMb: number; peakRssMb: number }> {
  global.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const t0 = performance.now();
  const value = await fn();
  const ms = performance.now() - t0;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  return {
    value,
    ms,
    heapDeltaMb: (process.memoryUsage().heapUsed - heap0) / 1048576,
    peakRssMb: peak / 1048576,
  };
}

const passes: Array<Record<string, unknown>> = [];
for (let i = 0; i < 3; i++) {
  const r = await measured(() => runSloPass(pool, { now: end + 30_000, settleMs: 0 }));
  const row = {
    pass: i + 1,
    ms: Number(r.ms.toFixed(0)),
    fired: r.value.fired.length,
    resolved: r.value.resolved.length,
    counted_minutes: r.value.counted?.minutes ?? 0,
    phases_ms: r.value.phases_ms,
    heap_delta_mb: Number(r.heapDeltaMb.toFixed(1)),
    peak_rss_mb: Number(r.peakRssMb.toFixed(0)),
  };
  passes.push(row);
  log(
    `pass ${i + 1}: ${secs(r.ms)} [count ${row.phases_ms.count} ms, evaluate ${row.phases_ms.evaluate} ms, alerts ${row.phases_ms.alerts} ms] (fired ${row.fired}, resolved ${row.resolved}, counted ${row.counted_minutes} SLO-minutes), heap +${row.heap_delta_mb} MB, peak RSS ${row.peak_rss_mb} MB`,
  );
  if (i === 0) {
    // A minute of fresh spans for the next passes' counting step.
    await insertMinute();
  }
}

// Phases on their own.
const slos = await listSlos(pool);
const evalOnly = await measured(() => evaluateSlos(pool, slos, end + 30_000));
const countOnly = await measured(() => countNewObservations(pool, { settleMs: 0 }));
log(
  `phases: evaluate ${SLOS} SLOs ${secs(evalOnly.ms)}, count (nothing new) ${secs(countOnly.ms)}`,
);

const delivery = await measured(() =>
  runDeliveryPass(pool, { baseUrl: 'http://localhost:8080', now: Date.now() + MIN }),
);
log(
  `delivery pass: ${delivery.value.delivered} deliveries in ${secs(delivery.ms)} (receiver saw ${received})`,
);

const worst = Math.max(...passes.map((p) => p.ms as number));
const file = await writeResult('slo', {
  slos: SLOS,
  days: DAYS,
  minute_rows: counts.rows[0].minutes,
  hour_rows: counts.rows[0].hours,
  day_rows: counts.rows[0].days,
  raw_spans_per_pass: SPANS_LAST_MINUTE,
  target_ms: TARGET_MS,
  passes,
  evaluate_only_ms: Number(evalOnly.ms.toFixed(0)),
  delivery: { deliveries: delivery.value.delivered, ms: Number(delivery.ms.toFixed(0)) },
  worst_pass_ms: worst,
  meets_target: worst < TARGET_MS,
});
log(
  `worst pass ${secs(worst)} (target < ${secs(TARGET_MS)}): ${worst < TARGET_MS ? 'OK' : 'MISSED'}; wrote ${file}`,
);

await new Promise<void>((r) => receiver.close(() => r()));
await pool.end();
await db.stop();
