/**
 * bench/quantiles: one series with 30 days of 1-minute histograms (as the
 * compaction job leaves them); time the quantiles API for typical views.
 */
import { Histogram } from '@onset/core';
import pg from 'pg';
import { compactHistograms, createPool, Partitions } from '@onset/server/internals';
import { benchDatabase, percentile, startServerProcess, writeResult } from '../lib/harness.ts';

const DAYS = 30;
const { db, url } = await benchDatabase();
const server = await startServerProcess(url, { ONSET_AGENT: 'off' });
const client = new pg.Client(url);
await client.connect();

// Register the series through the real ingest path, then backfill its histograms.
const end = Math.floor(Date.now() / 60_000) * 60_000;
// Whole UTC days, so each day's minutes fall in one daily partition.
const start = Math.floor(end / 86_400_000) * 86_400_000 - DAYS * 86_400_000;
const ns = BigInt(end - 120_000) * 1_000_000n;
await fetch(`${server.otlpUrl}/v1/traces`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'bench' } },
            { key: 'host.name', value: { stringValue: 'h1' } },
          ],
        },
        scopeSpans: [
          {
            spans: [
              {
                traceId: 'ab'.repeat(16),
                spanId: 'cd'.repeat(8),
                name: 'spawn',
                startTimeUnixNano: String(ns),
                endTimeUnixNano: String(ns + 3_000_000n),
              },
            ],
          },
        ],
      },
    ],
  }),
});
const {
  rows: [s],
} = await client.query(
  `SELECT id, (SELECT resource_id FROM series_resources WHERE series_id = series.id LIMIT 1) AS rid FROM series WHERE service = 'bench'`,
);
const t0 = performance.now();
for (let day = 0; day < DAYS; day++) {
  const dayStart = start + day * 86_400_000;
  await client
    .query(
      `CREATE TABLE IF NOT EXISTS histograms_p${new Date(dayStart).toISOString().slice(0, 10).replaceAll('-', '')} PARTITION OF histograms FOR VALUES FROM ('${new Date(dayStart).toISOString().slice(0, 10)} 00:00:00+00') TO ('${new Date(dayStart + 86_400_000).toISOString().slice(0, 10)} 00:00:00+00')`,
    )
    .catch(() => {});
  const rows: string[][] = [[], [], [], [], [], [], []];
  for (let m = 0; m < 1440; m++) {
    const h = new Histogram();
    const base = 3000 * (1 + 0.3 * Math.sin((m / 1440) * 2 * Math.PI)); // diurnal, µs
    for (let k = 0; k < 60; k++)
      h.record(base * Math.exp((Math.random() - 0.5) * 2) * (Math.random() < 0.02 ? 50 : 1));
    const sp = h.toSparse();
    rows[0]!.push(new Date(dayStart + m * 60_000).toISOString());
    rows[1]!.push(String(h.count));
    rows[2]!.push(String(h.sum));
    rows[3]!.push(String(h.min));
    rows[4]!.push(String(h.max));
    rows[5]!.push(`{${sp.idx.join(',')}}`);
    rows[6]!.push(`{${sp.cnt.join(',')}}`);
  }
  await client.query(
    `INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt, compacted)
     SELECT $1, $2, m::timestamptz, c, su, mn, mx, i::int[], k::int[], false
       FROM unnest($3::text[], $4::int8[], $5::float8[], $6::float8[], $7::float8[], $8::text[], $9::text[]) AS u(m, c, su, mn, mx, i, k)`,
    [s.id, s.rid, ...rows],
  );
}
// Fold minutes and build hourly rollups with the server's own compaction pass.
const pool = createPool(url, 2);
const tc = performance.now();
await compactHistograms(pool, new Partitions(pool), end);
console.log(
  `bench/quantiles: compaction + hourly rollups took ${((performance.now() - tc) / 1000).toFixed(1)} s`,
);
await pool.end();
await client.query('ANALYZE histograms');
await client.query('ANALYZE histograms_hourly');
console.log(
  `bench/quantiles: loaded ${DAYS * 1440} minute histograms in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);

async function timeQuery(label: string, qs: string, runs = 15) {
  const times: number[] = [];
  let points = 0;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const res = await fetch(`${server.url}/api/v1/series/${s.id}/quantiles?${qs}`);
    const body = (await res.json()) as { points: unknown[] };
    times.push(performance.now() - t);
    points = body.points.length;
  }
  return {
    view: label,
    points,
    p50_ms: Number(percentile(times, 0.5).toFixed(1)),
    p90_ms: Number(percentile(times, 0.9).toFixed(1)),
  };
}

const from = new Date(start).toISOString();
const to = new Date(end).toISOString();
const results = [
  await timeQuery('30 d, auto step (2 h)', `from=${from}&to=${to}&q=0.5,0.99`),
  await timeQuery('30 d, step 1h', `from=${from}&to=${to}&step=1h&q=0.5,0.99`),
  await timeQuery('30 d, step 1d', `from=${from}&to=${to}&step=1d&q=0.5,0.99`),
  await timeQuery('1 d, step 1m', `from=now-1d&step=1m&q=0.5,0.99`),
  await timeQuery('6 h, auto step', `from=now-6h&q=0.5,0.99`),
];
console.table(results);
await client.end();
await server.stop();
await db.stop();
console.log(
  `wrote ${await writeResult('quantiles', { minutes: DAYS * 1440, target_ms: 50, results })}`,
);
