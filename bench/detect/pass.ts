/**
 * bench/detect (DB-backed pass): one detection pass over 10,000 series x
 * 7 days of 1-minute histograms in embedded PostgreSQL, cold (no detector
 * state yet) and incremental (one new minute), time and memory.
 *
 *   npm run bench:detect [-- --series 10000 --days 7 --minute-hours 8]
 *
 * The fixture is what the server stores: per-minute histogram rows (as left
 * by compaction) and hourly rollups. A cold pass reads each new series' last
 * 6 h of minutes and screens older history on the hourly rollups, re-reading
 * minutes only around a step it finds there (see docs/regressions.md). So
 * minute rows are generated for the last `--minute-hours` (8 h by default)
 * for every series, plus 12 h around each planted old step; generating all
 * 100 M minute rows of the week (~35 GB) would not change what the pass
 * reads. `--minute-hours 168` generates them all, for a machine with the
 * disk and the patience.
 *
 * Planted: 1% of the series step up (x2..x5) at a random time between 7 d
 * and 12 h ago (found by the hourly screen), 1% between 12 h and 1 h ago
 * (across the boundary of the 6 h minute window).
 * The pass runs in this process against its own pool (the engine is the
 * server's); RSS is sampled every 50 ms.
 */
import { parseArgs } from 'node:util';
import {
  createPool,
  migrate,
  Partitions,
  runDetectionPass,
  utcDay,
  type DetectionPassResult as PassResult,
} from '@onset/server/internals';
import { benchDatabase, percentile, writeResult } from '../lib/harness.ts';

const { values: args } = parseArgs({
  options: {
    series: { type: 'string', default: '10000' },
    days: { type: 'string', default: '7' },
    'minute-hours': { type: 'string', default: '8' },
    incremental: { type: 'string', default: '5' },
  },
});
const SERIES = Number(args.series);
const DAYS = Number(args.days);
const MINUTE_HOURS = Math.min(Number(args['minute-hours']), DAYS * 24);
const INCREMENTAL = Number(args.incremental);
const MIN = 60_000;
const HOUR = 60 * MIN;

const log = (msg: string) => console.log(`bench/detect: ${msg}`);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

// ---- memory sampling ------------------------------------------------------
let peakRss = 0;
const sample = () => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
};
const sampler = setInterval(sample, 50);
sampler.unref();
async function measured<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; ms: number; peakRssMb: number }> {
  sample();
  peakRss = process.memoryUsage.rss();
  const t = performance.now();
  const value = await fn();
  const ms = performance.now() - t;
  sample();
  return { value, ms, peakRssMb: Math.round(peakRss / 2 ** 20) };
}

// ---- fixture ---------------------------------------------------------------
const { db, url } = await benchDatabase();
await migrate(url);
const pool = createPool(url, 8);
const partitions = new Partitions(pool);

// The last generated minute is `end - 1 min`; incremental minutes follow it, all in the past.
const end = Math.floor(Date.now() / MIN) * MIN - (INCREMENTAL + 3) * MIN;
const start = end - DAYS * 24 * HOUR;
const days = new Set<string>();
for (let t = start - HOUR; t <= end + HOUR * 2; t += HOUR) days.add(utcDay(t));
await partitions.ensure('histograms', days);
await partitions.ensure('histograms_hourly', days);

const t0 = performance.now();
// One resource (host) per series; base latency log-uniform from ~1 ms to ~3 s (bucket index).
await pool.query(
  `INSERT INTO resources (id, service, host, attrs, attrs_key)
   SELECT i, 'svc-' || (i / 20), 'host-' || (i % 500), jsonb_build_object('os.version', '6.1.0-' || (i % 3)), 'k' || i
     FROM generate_series(1, $1) i`,
  [SERIES],
);
await pool.query(
  `INSERT INTO series (id, service, op, view, name, peer)
   SELECT i, 'svc-' || (i / 20), 'request', 'server', 'GET /r/' || i, '' FROM generate_series(1, $1) i`,
  [SERIES],
);
await pool.query(
  `INSERT INTO series_resources (series_id, resource_id) SELECT i, i FROM generate_series(1, $1) i`,
  [SERIES],
);
// Planted steps: kind 1 = old (hourly screen), kind 2 = recent (minute window).
await pool.query(
  `CREATE TABLE bench_series AS
   SELECT i AS id, 350 + (i * 37) % 400 AS b0,
          CASE WHEN i % 100 = 7 THEN 1 WHEN i % 100 = 42 THEN 2 ELSE 0 END AS kind,
          CASE WHEN i % 100 = 7 THEN to_timestamp(($2::float8 + 12 * 3600000 + random() * ($3::float8 - $2::float8 - 24 * 3600000)) / 1000)
               WHEN i % 100 = 42 THEN to_timestamp(($3::float8 - 12 * 3600000 + random() * (11 * 3600000)) / 1000) END AS step_at,
          round(ln(2 + 3 * random()) / ln(1.01 / 0.99))::int AS step
     FROM generate_series(1, $1) i`,
  [SERIES, start, end],
);
await pool.query(`UPDATE bench_series SET step_at = date_trunc('minute', step_at)`);
await pool.query(`ANALYZE bench_series`);

/** Per-minute rows for series (filter) over [fromMs, toMs), one day at a time (one partition per statement). */
async function minuteRows(filter: string, fromMs: number, toMs: number): Promise<number> {
  let n = 0;
  for (let d = Math.floor(fromMs / 86_400_000) * 86_400_000; d < toMs; d += 86_400_000) {
    const a = Math.max(fromMs, d);
    const b = Math.min(toMs, d + 86_400_000);
    if (a >= b) continue;
    const r = await pool.query(
      `INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt, compacted)
       SELECT s.id, s.id, m.t, 60, 60 * exp(k.b * ln(1.01 / 0.99)), exp((k.b - 3) * ln(1.01 / 0.99)), exp((k.b + 30) * ln(1.01 / 0.99)),
              ARRAY[k.b - 3, k.b - 1, k.b, k.b + 1, k.b + 3, k.b + 9, k.b + 30],
              ARRAY[5, 12, 16, 13, 8, 5, 1], true
         FROM bench_series s
        CROSS JOIN generate_series(to_timestamp($1::float8 / 1000), to_timestamp(($2::float8 - 60000) / 1000), interval '1 minute') AS m(t)
        CROSS JOIN LATERAL (SELECT s.b0 + CASE WHEN s.step_at IS NOT NULL AND m.t >= s.step_at THEN s.step ELSE 0 END
                                   + floor(random() * 9)::int - 4 AS b) k
        WHERE ${filter}
        ORDER BY m.t`,
      [a, b],
    );
    n += r.rowCount ?? 0;
  }
  return n;
}

let minuteCount = await minuteRows('true', end - MINUTE_HOURS * HOUR, end);
// Kind-2 steps older than the generated minutes need their minutes too.
minuteCount += await minuteRows('s.kind = 2', end - 13 * HOUR, end - MINUTE_HOURS * HOUR);
// Minutes around the old planted steps (the screen re-reads them there).
for (const { step_at } of (
  await pool.query<{ step_at: Date }>(
    `SELECT step_at FROM bench_series WHERE kind = 1 ORDER BY step_at`,
  )
).rows) {
  const at = step_at.getTime();
  const from = Math.max(start, at - 6 * HOUR);
  const to = Math.min(end - MINUTE_HOURS * HOUR, at + 6 * HOUR);
  if (from < to)
    minuteCount += await minuteRows(
      `s.kind = 1 AND s.step_at = to_timestamp(${at / 1000})`,
      from,
      to,
    );
}
// Hourly rollups of the whole week: 60 minutes of the same shape, the hour of a step at its later level.
const hourly = await pool.query(
  `INSERT INTO histograms_hourly (series_id, resource_id, hour, count, sum_us, min_us, max_us, idx, cnt)
   SELECT s.id, s.id, h.t, 3600, 3600 * exp(k.b * ln(1.01 / 0.99)), exp((k.b - 7) * ln(1.01 / 0.99)), exp((k.b + 34) * ln(1.01 / 0.99)),
          ARRAY[k.b - 7, k.b - 5, k.b - 3, k.b - 1, k.b, k.b + 1, k.b + 3, k.b + 5, k.b + 9, k.b + 30, k.b + 34],
          ARRAY[60, 200, 420, 720, 880, 720, 400, 150, 30, 15, 5]
     FROM bench_series s
    CROSS JOIN generate_series(to_timestamp($1::float8 / 1000), to_timestamp(($2::float8 - 3600000) / 1000), interval '1 hour') AS h(t)
    CROSS JOIN LATERAL (SELECT s.b0 + CASE WHEN s.step_at IS NOT NULL AND h.t + interval '30 minutes' >= s.step_at THEN s.step ELSE 0 END
                               + floor(random() * 3)::int - 1 AS b) k
    ORDER BY h.t`,
  [Math.floor(start / HOUR) * HOUR, Math.floor(end / HOUR) * HOUR],
);
await pool.query('ANALYZE');
const { rows: size } = await pool.query<{ mb: number }>(
  `SELECT (pg_database_size(current_database()) / 1048576)::int AS mb`,
);
log(
  `fixture: ${SERIES} series x ${DAYS} d; ${minuteCount.toLocaleString('en')} minute rows (last ${MINUTE_HOURS} h + around old steps), ` +
    `${(hourly.rowCount ?? 0).toLocaleString('en')} hourly rows, ${size[0]!.mb} MB, built in ${secs(performance.now() - t0)}`,
);

// ---- passes ----------------------------------------------------------------
const summary = (r: PassResult) =>
  `${r.series.total} series (${r.series.new} new), ${r.series.points.toLocaleString('en')} points, ${r.screened} screened, ` +
  `${r.regressions.opened} opened, ${r.regressions.resolved} resolved`;

const cold = await measured(() => runDetectionPass(pool, { uptoMs: end }));
log(`cold pass: ${secs(cold.ms)}, peak RSS ${cold.peakRssMb} MB — ${summary(cold.value)}`);

/** One more minute of data for every series (the next minute after `through`). */
async function addMinute(minute: number): Promise<void> {
  await minuteRows('true', minute, minute + MIN);
}

const incremental: number[] = [];
let incrementalPeak = 0;
for (let i = 0; i < INCREMENTAL; i++) {
  const minute = end + i * MIN;
  await addMinute(minute);
  const r = await measured(() => runDetectionPass(pool, { uptoMs: minute + MIN }));
  incremental.push(r.ms);
  incrementalPeak = Math.max(incrementalPeak, r.peakRssMb);
  log(
    `incremental pass ${i + 1} (one new minute): ${secs(r.ms)}, peak RSS ${r.peakRssMb} MB — ${summary(r.value)}`,
  );
}

// A second server process: no detectors in memory, it starts from the checkpoints in the database.
const other = createPool(url, 8);
const next = end + INCREMENTAL * MIN;
await addMinute(next);
const fromCheckpoints = await measured(() => runDetectionPass(other, { uptoMs: next + MIN }));
log(
  `incremental pass on a fresh process (states from checkpoints): ${secs(fromCheckpoints.ms)}, peak RSS ${fromCheckpoints.peakRssMb} MB — ${summary(fromCheckpoints.value)}`,
);

// ---- what was found --------------------------------------------------------
// Per series: a step is found when its series is a member of a regression (steps of one service
// within minutes are one regression, docs/regressions.md "One incident, one regression").
const { rows: found } = await pool.query<{ kind: number; n: number; near: number }>(
  `SELECT s.kind, count(*)::int AS n,
          count(*) FILTER (WHERE abs(extract(epoch FROM r.onset - s.step_at)) <= 600)::int AS near
     FROM regression_members r JOIN bench_series s ON s.id = r.series_id GROUP BY s.kind ORDER BY s.kind`,
);
const planted = await pool.query<{ kind: number; n: number }>(
  `SELECT kind, count(*)::int AS n FROM bench_series WHERE kind > 0 GROUP BY kind`,
);
const plantedOf = (k: number) => planted.rows.find((r) => r.kind === k)?.n ?? 0;
const foundOf = (k: number) => found.find((r) => r.kind === k) ?? { n: 0, near: 0 };
const detection = {
  old_steps: { planted: plantedOf(1), found: foundOf(1).n, onset_within_10_min: foundOf(1).near },
  recent_steps: {
    planted: plantedOf(2),
    found: foundOf(2).n,
    onset_within_10_min: foundOf(2).near,
  },
  regressions_on_flat_series: foundOf(0).n,
};
log(`found: ${JSON.stringify(detection)}`);
const { rows: missed } = await pool.query<{ kind: number; ago: number }>(
  `SELECT s.kind, round(extract(epoch FROM to_timestamp($1::float8 / 1000) - s.step_at) / 60)::int AS ago FROM bench_series s
    WHERE s.kind > 0 AND NOT EXISTS (SELECT 1 FROM regression_members r WHERE r.series_id = s.id) ORDER BY 1, 2`,
  [end],
);
if (missed.length)
  log(
    `missed steps (kind: minutes before the cold pass): ${missed.map((m) => `${m.kind}:${m.ago}`).join(' ')}`,
  );

const result = {
  series: SERIES,
  days: DAYS,
  minute_rows: minuteCount,
  minute_hours_generated: MINUTE_HOURS,
  hourly_rows: hourly.rowCount ?? 0,
  cold: {
    seconds: Number((cold.ms / 1000).toFixed(2)),
    peak_rss_mb: cold.peakRssMb,
    points: cold.value.series.points,
    screened: cold.value.screened,
    target_seconds: 60,
  },
  incremental: {
    passes: incremental.length,
    median_seconds: Number((percentile(incremental, 0.5) / 1000).toFixed(2)),
    max_seconds: Number((Math.max(...incremental) / 1000).toFixed(2)),
    peak_rss_mb: incrementalPeak,
    target_seconds: 5,
  },
  incremental_from_checkpoints: {
    seconds: Number((fromCheckpoints.ms / 1000).toFixed(2)),
    peak_rss_mb: fromCheckpoints.peakRssMb,
  },
  process_peak_rss_mb: Math.round(
    Number(
      /VmHWM:\s+(\d+)/.exec(
        await (await import('node:fs/promises')).readFile('/proc/self/status', 'utf8'),
      )?.[1] ?? 0,
    ) / 1024,
  ),
  rss_target_mb: 1024,
  detection,
};
console.table({
  cold: { seconds: result.cold.seconds, 'peak RSS MB': result.cold.peak_rss_mb },
  'incremental (median)': {
    seconds: result.incremental.median_seconds,
    'peak RSS MB': result.incremental.peak_rss_mb,
  },
  'incremental (max)': {
    seconds: result.incremental.max_seconds,
    'peak RSS MB': result.incremental.peak_rss_mb,
  },
  'incremental, fresh process': {
    seconds: result.incremental_from_checkpoints.seconds,
    'peak RSS MB': result.incremental_from_checkpoints.peak_rss_mb,
  },
});
await other.end();
await pool.end();
await db.stop();
log(`wrote ${await writeResult('detect', result)}`);
