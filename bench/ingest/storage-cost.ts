/**
 * bench/ingest/storage-cost: what each part of the per-span write costs
 * PostgreSQL. The same spans (binary COPY rows, batches of 2,000) go through
 * the ingest statement (write-spans.ts) into a fresh database per variant:
 * the raw row as it was before migration 0019 (every span with its
 * attributes, a (series_id, start_time) index, the pairing index on every
 * child span), as stored now (attributes and the series/time index only for
 * exemplars, otlp/exemplars.ts), now without the exemplars' attributes, and
 * histograms only (no raw row). Prints PostgreSQL CPU seconds, WAL bytes and
 * table bytes per span for each, so what is kept raw is decided on numbers
 * (docs/scaling.md).
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { migrate } from '@onset/server/internals';
import { benchDatabase, postmasterPid, writeResult } from '../lib/harness.ts';
import { postgresCpuSeconds } from './cpu.ts';
import { COPY_HEADER, COPY_TRAILER, CopyRows } from '../../apps/server/src/otlp/copy-rows.ts';
import { writeSpans } from '../../apps/server/src/otlp/write-spans.ts';
import { Partitions, utcDay } from '../../apps/server/src/db/partitions.ts';
import { ExemplarSampler, traceUnit } from '../../apps/server/src/otlp/exemplars.ts';

const SPANS = Number(process.env.BENCH_SPANS ?? 200_000);
const BATCH = 2_000;

interface Variant {
  name: string;
  setup?: string;
  /** Which spans are exemplars: all (as before 0019), sampled (now), or none. */
  exemplars: 'all' | 'sampled' | 'none';
  attrs?: boolean;
  /** Replace the ingest statement (histograms only). */
  sql?: string;
}

const HISTOGRAMS_ONLY = `INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt)
  SELECT series_id, resource_id, minute, sum(c), sum(s), min(mn), max(mx), array_agg(i ORDER BY i), array_agg(c ORDER BY i)
    FROM (SELECT series_id, resource_id, date_trunc('minute', start_time) AS minute, onset_bucket(duration_us) AS i,
                 count(*)::int AS c, sum(duration_us) AS s, min(duration_us) AS mn, max(duration_us) AS mx
            FROM ingest_stage GROUP BY 1, 2, 3, 4) b
   GROUP BY 1, 2, 3`;

/** The indexes observations had before 0019. */
const BEFORE_INDEXES = `DROP INDEX observations_parent;
  CREATE INDEX observations_parent ON observations (trace_id, parent_span_id) WHERE parent_span_id IS NOT NULL;
  CREATE INDEX observations_series_time ON observations (series_id, start_time)`;

const VARIANTS: Variant[] = [
  {
    name: 'before 0019: every span with attributes and indexed by series/time',
    setup: BEFORE_INDEXES,
    exemplars: 'all',
  },
  { name: 'now: attributes and series/time index for exemplars only', exemplars: 'sampled' },
  { name: 'now, exemplars without attributes', exemplars: 'sampled', attrs: false },
  { name: 'no exemplars (dedup, pairing, durations, histograms)', exemplars: 'none' },
  { name: 'histograms only (no raw row)', exemplars: 'none', sql: HISTOGRAMS_ONLY },
];

function batch(seed: number, v: Variant, sampler: ExemplarSampler): Buffer {
  const rows = new CopyRows(BATCH * 220);
  const now = Date.now();
  for (let i = 0; i < BATCH; i++) {
    const series = 1 + (i % 40);
    const resource = 1 + (seed % 16);
    const start = now - i;
    const traceId = randomBytes(16);
    const exemplar =
      v.exemplars === 'all' ||
      (v.exemplars === 'sampled' &&
        sampler.keep(
          sampler.counter(`${series}:${resource}`, Math.floor(start / 60_000)),
          traceUnit(traceId),
        ));
    rows.reserve(220);
    rows.row(10);
    rows.bytes(traceId);
    rows.bytes(randomBytes(8));
    if (i % 2) rows.bytes(randomBytes(8));
    else rows.null();
    rows.int8(series);
    rows.int8(resource);
    rows.timestampMs(start);
    rows.float8(200 * Math.exp((i % 37) / 6));
    rows.int2(i % 2 ? 2 : 3);
    if (exemplar && v.attrs !== false)
      rows.jsonb(
        `{"http.request.method":"GET","http.route":"/api/${i % 5}","server.address":"urlite"}`,
      );
    else rows.null();
    rows.reserve(5);
    rows.bool(exemplar);
  }
  return Buffer.from(rows.view());
}

const results: Array<Record<string, unknown>> = [];
for (const v of VARIANTS) {
  const { db, url, dataDir } = await benchDatabase();
  await migrate(url);
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {}); // the database stops at the end of each variant
  const partitions = new Partitions(pool);
  const today = utcDay(Date.now());
  await partitions.ensure('observations', [today]);
  await partitions.ensure('span_durations', [today]);
  await partitions.ensure('histograms', [today]);
  if (v.setup) await pool.query(v.setup);
  const sampler = new ExemplarSampler();
  const batches = Array.from({ length: SPANS / BATCH }, (_, k) => batch(k, v, sampler));
  const client = await pool.connect();
  const pgPid = await postmasterPid(dataDir);
  const { rows: w0 } = await client.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l');
  await writeSpans(client, [], today); // creates the session's staging table before measuring
  const cpu0 = postgresCpuSeconds(pgPid);
  const t0 = performance.now();
  for (const b of batches) {
    if (!v.sql) await writeSpans(client, [b], today);
    else {
      // The same staging path, then only the histogram fold.
      await client.query('BEGIN');
      await pipeline(
        Readable.from([COPY_HEADER, b, COPY_TRAILER]),
        client.query(copyStreams.from('COPY ingest_stage FROM STDIN (FORMAT binary)')),
      );
      await client.query(v.sql);
      await client.query('COMMIT');
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = postgresCpuSeconds(pgPid) - cpu0;
  const { rows: s } = await client.query<{ wal: string; bytes: string | null; ex: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) AS wal,
            (SELECT sum(pg_total_relation_size(i.inhrelid)) FROM pg_inherits i
              WHERE i.inhparent IN ('observations'::regclass, 'span_durations'::regclass, 'histograms'::regclass)) AS bytes,
            (SELECT count(*) FROM observations WHERE exemplar) AS ex`,
    [w0[0]!.l],
  );
  client.release();
  await pool.end();
  await db.stop();
  const r = {
    variant: v.name,
    spans_per_second: Math.round(SPANS / seconds),
    spans_per_postgres_cpu_second: Math.round(SPANS / cpu),
    wal_bytes_per_span: Math.round(Number(s[0]!.wal) / SPANS),
    table_bytes_per_span: Math.round(Number(s[0]!.bytes ?? 0) / SPANS),
    exemplar_share: Number((Number(s[0]!.ex) / SPANS).toFixed(3)),
  };
  console.log(r);
  results.push(r);
}
console.table(results);
console.log(
  `wrote ${await writeResult('ingest-storage-cost', { spans: SPANS, batch: BATCH, results })}`,
);
