/**
 * The detect-scale fixture, made with generate_series in SQL (seconds, not
 * hours of ingest): `n` series with `points` minute histograms each ending a
 * minute before `end`, one resource per 20 series, and `callsPerSeries` x n
 * client/server span pairs over 1,000 edges for pairing.
 */
import { createPool, Partitions, utcDay } from '@onset/server/internals';

const MIN = 60_000;
const secs = (ms: number) => Number((ms / 1000).toFixed(2));

export async function buildFixture(
  url: string,
  n: number,
  end: number,
  o: { points: number; callsPerSeries: number; log: (msg: string) => void },
): Promise<Record<string, number>> {
  const { points: POINTS, callsPerSeries: CALLS_PER_SERIES, log } = o;
  const pool = createPool(url, 4);
  const partitions = new Partitions(pool);
  const days = new Set<string>();
  for (let t = end - (POINTS + 2) * MIN; t <= end + 10 * MIN; t += MIN) days.add(utcDay(t));
  days.add(utcDay(Date.now()));
  await partitions.ensure('histograms', days);
  await partitions.ensure('observations', days);
  const t0 = performance.now();
  await pool.query(
    `INSERT INTO resources (id, service, host, attrs, attrs_key)
     SELECT i, 'svc-' || (i / 5), 'host-' || (i % 200), '{}'::jsonb, 'k' || i FROM generate_series(1, $1) i`,
    [Math.ceil(n / 20)],
  );
  await pool.query(
    `INSERT INTO series (id, service, op, view, name, peer)
     SELECT i, 'svc-' || (i / 100), 'request', 'server', 'GET /r/' || i, '' FROM generate_series(1, $1) i`,
    [n],
  );
  await pool.query(`SELECT setval('series_id_seq', $1), setval('resources_id_seq', $2)`, [
    n,
    Math.ceil(n / 20),
  ]);
  await pool.query(
    `INSERT INTO series_resources (series_id, resource_id) SELECT i, 1 + i / 20 FROM generate_series(1, $1) i`,
    [n],
  );
  // A few minutes per series (base bucket varies per series, noise per minute).
  const minutes = await pool.query(
    `INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt, compacted)
     SELECT i, 1 + i / 20, m.t, 60, 60 * exp(b * ln(1.01 / 0.99)), exp((b - 3) * ln(1.01 / 0.99)),
            exp((b + 30) * ln(1.01 / 0.99)), ARRAY[b - 3, b - 1, b, b + 1, b + 3, b + 9, b + 30],
            ARRAY[5, 12, 16, 13, 8, 5, 1], true
       FROM generate_series(1, $1) i
      CROSS JOIN generate_series(to_timestamp($2::float8 / 1000), to_timestamp($3::float8 / 1000), interval '1 minute') AS m(t)
      CROSS JOIN LATERAL (SELECT 350 + (i * 37) % 400 + floor(random() * 9)::int - 4 AS b) k`,
    [n, end - POINTS * MIN, end - MIN],
  );
  // Client/server span pairs for pairing: client series c, server series n/2 + c, over 1,000 edges.
  const calls = Math.round(n * CALLS_PER_SERIES);
  const obs = await pool.query(
    `INSERT INTO observations (received_day, received_at, trace_id, span_id, parent_span_id, series_id, resource_id,
                               start_time, duration_us, kind)
     SELECT current_date, now() - interval '1 minute' + j * interval '1 microsecond',
            decode(lpad(to_hex(j), 32, '0'), 'hex'),
            decode(lpad(to_hex(j * 2 + side), 16, '0'), 'hex'),
            CASE WHEN side = 1 THEN decode(lpad(to_hex(j * 2), 16, '0'), 'hex') END,
            CASE WHEN side = 0 THEN 1 + j % 1000 ELSE $2 / 2 + 1 + j % 1000 END, 1,
            now() - interval '3 minutes', CASE WHEN side = 0 THEN 1500 + j % 700 ELSE 1000 + j % 500 END,
            CASE WHEN side = 0 THEN 3 ELSE 2 END
       FROM generate_series(1, $1) j CROSS JOIN (VALUES (0), (1)) AS s(side)`,
    [calls, n],
  );
  await pool.query('ANALYZE');
  const { rows } = await pool.query<{ mb: number }>(
    `SELECT (pg_database_size(current_database()) / 1048576)::int AS mb`,
  );
  await pool.end();
  log(
    `fixture: ${n.toLocaleString('en')} series, ${(minutes.rowCount ?? 0).toLocaleString('en')} minute rows, ` +
      `${(obs.rowCount ?? 0).toLocaleString('en')} spans (${calls.toLocaleString('en')} calls), ${rows[0]!.mb} MB, ` +
      `built in ${secs(performance.now() - t0)} s`,
  );
  return {
    minute_rows: minutes.rowCount ?? 0,
    spans: obs.rowCount ?? 0,
    calls,
    database_mb: rows[0]!.mb,
  };
}
