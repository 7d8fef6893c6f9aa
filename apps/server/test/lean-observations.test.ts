/**
 * The lean raw row (migration 0019, docs/scaling.md): every span is stored
 * once with what dedup, pairing and SLO counts need, but only exemplars keep
 * their attributes; the durations of every span go to span_durations for a
 * new SLO's exact history. Also: the migration carries rows stored before it
 * forward (all of them exemplars, their durations in span_durations).
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runner } from 'node-pg-migrate';
import { createTestDatabase, startTestServer, type TestServer } from '@onset/testkit';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { EXEMPLARS_FIRST, ExemplarSampler, keepRate, traceUnit } from '../src/otlp/exemplars.ts';
import { writePaths, writeSpans } from '../src/otlp/write-spans.ts';
import { CopyRows } from '../src/otlp/copy-rows.ts';
import { Partitions, utcDay } from '../src/db/partitions.ts';

const MIGRATIONS = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../migrations',
);

describe('exemplar sampler', () => {
  it('keeps the first spans of a minute, then a thinning share, and starts again each minute', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const s = new ExemplarSampler(EXEMPLARS_FIRST);
    const c = s.counter('checkout GET', 1000);
    const kept: number[] = [];
    for (let i = 1; i <= 100_000; i++) if (s.keep(c, random())) kept.push(i);
    expect(kept.slice(0, EXEMPLARS_FIRST)).toEqual(
      Array.from({ length: EXEMPLARS_FIRST }, (_, i) => i + 1),
    );
    // Expected first × (1 + ln(n / first)) = 20 × (1 + ln 5000) ≈ 190.
    expect(kept.length).toBeGreaterThan(120);
    expect(kept.length).toBeLessThan(280);
    // Spread over the minute: some from its last tenth too.
    expect(kept.filter((i) => i > 90_000).length).toBeGreaterThan(0);
    expect(s.counter('checkout GET', 1000)).toBe(c);
    const next = s.counter('checkout GET', 1001);
    expect(s.keep(next, 0.99)).toBe(true);
  });
});

describe('exemplar sampler with a cluster-wide keep rate', () => {
  it('keeps the spans under the rate wherever they arrive, plus each sampler’s running lowest', () => {
    let seed = 11;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const units = Array.from({ length: 20_000 }, () => random());
    const rate = keepRate(units.length);
    const servers = [new ExemplarSampler(), new ExemplarSampler()];
    for (const s of servers) s.setRates(new Map([['checkout GET', rate]]));
    const counters = servers.map((s) => s.counter('checkout GET', 1000));
    const lows = [1, 1];
    units.forEach((u, i) => {
      const k = (i >> 7) % 2; // exports of 128 spans, alternating servers
      const lowest = u < lows[k]!;
      if (lowest) lows[k] = u;
      expect(servers[k]!.keep(counters[k]!, u)).toBe(u < rate || lowest);
    });
    // A pair without a rate falls back to the first spans and thinning.
    const other = servers[0]!.counter('other GET', 1000);
    expect(other.rate).toBeUndefined();
    expect(Array.from({ length: EXEMPLARS_FIRST }, () => servers[0]!.keep(other, 0.99))).toEqual(
      Array(EXEMPLARS_FIRST).fill(true),
    );
  });

  it('maps trace ids evenly onto [0, 1)', () => {
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 100_000; i++) {
      const id = Buffer.alloc(16);
      id.writeUInt32BE(i, 12); // sequential ids, not random ones
      buckets[Math.floor(traceUnit(id) * 10)]++;
    }
    for (const b of buckets) expect(Math.abs(b - 10_000)).toBeLessThan(500);
  });
});

describe('lean raw rows through the server', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(async () => {
    await srv?.close();
  });

  const start = Math.floor((Date.now() - 10 * 60_000) / 60_000) * 60_000 + 1000;
  function body(service: string, n: number, tag: number) {
    return JSON.stringify({
      resourceSpans: [
        {
          resource: {
            attributes: [
              { key: 'service.name', value: { stringValue: service } },
              { key: 'host.name', value: { stringValue: 'h1' } },
            ],
          },
          scopeSpans: [
            {
              spans: Array.from({ length: n }, (_, i) => {
                const t0 = BigInt(start + (i % 50_000)) * 1_000_000n;
                return {
                  traceId:
                    tag.toString(16).padStart(8, '0') + (i + 1).toString(16).padStart(24, '0'),
                  spanId: (i + 1).toString(16).padStart(16, '0'),
                  name: 'GET /lean',
                  kind: 2,
                  startTimeUnixNano: String(t0),
                  endTimeUnixNano: String(t0 + BigInt(1000 + i) * 1000n),
                  attributes: [{ key: 'http.route', value: { stringValue: `/lean/${i % 3}` } }],
                };
              }),
            },
          ],
        },
      ],
    });
  }
  async function post(b: string): Promise<number> {
    const res = await fetch(`${srv.otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: b,
    });
    return res.status;
  }
  async function stats(service: string) {
    const { rows } = await srv.onset.pool.query(
      `SELECT count(*)::int AS spans, count(*) FILTER (WHERE o.exemplar)::int AS exemplars,
              count(*) FILTER (WHERE o.exemplar AND o.attrs ? 'http.route')::int AS with_attrs,
              count(*) FILTER (WHERE NOT o.exemplar AND o.attrs IS NOT NULL)::int AS stray_attrs,
              (SELECT coalesce(sum(cardinality(d.durations)), 0)::int FROM span_durations d
                 JOIN series s2 ON s2.id = d.series_id WHERE s2.service = $1) AS durations,
              (SELECT coalesce(sum(h.count), 0)::int FROM histograms h
                 JOIN series s3 ON s3.id = h.series_id WHERE s3.service = $1) AS counted
         FROM observations o JOIN series s ON s.id = o.series_id WHERE s.service = $1`,
      [service],
    );
    return rows[0];
  }

  it('stores a busy series once per span, with attributes only for a bounded sample of exemplars', async () => {
    const b = body('lean-busy', 4000, 1);
    const direct = writePaths.direct;
    expect(await post(b)).toBe(200);
    // New spans are copied straight into the day's partition.
    expect(writePaths.direct).toBeGreaterThan(direct);
    const s = await stats('lean-busy');
    expect(s).toMatchObject({ spans: 4000, durations: 4000, counted: 4000, stray_attrs: 0 });
    expect(s.exemplars).toBeGreaterThanOrEqual(EXEMPLARS_FIRST);
    expect(s.exemplars).toBeLessThan(400);
    expect(s.with_attrs).toBe(s.exemplars);
    // Histograms and durations folded by the server match what PostgreSQL folds from the rows.
    const { rows: folded } = await srv.onset.pool.query(
      `WITH mine AS (SELECT id FROM series WHERE service = 'lean-busy')
       SELECT (SELECT json_agg(x ORDER BY x.i) FROM (SELECT b.i, sum(b.c)::int AS c FROM histograms h
                 JOIN mine ON mine.id = h.series_id, unnest(h.idx, h.cnt) AS b(i, c) GROUP BY 1) x) AS stored,
              (SELECT json_agg(y ORDER BY y.i) FROM (SELECT onset_bucket(o.duration_us) AS i, count(*)::int AS c
                 FROM observations o JOIN mine ON mine.id = o.series_id GROUP BY 1) y) AS rows,
              (SELECT sum(h.sum_us) FROM histograms h JOIN mine ON mine.id = h.series_id) AS sum_stored,
              (SELECT sum(o.duration_us) FROM observations o JOIN mine ON mine.id = o.series_id) AS sum_rows,
              (SELECT array_agg(d ORDER BY d) FROM span_durations sd JOIN mine ON mine.id = sd.series_id,
                 unnest(sd.durations) AS d) AS durations,
              (SELECT array_agg(o.duration_us ORDER BY o.duration_us) FROM observations o
                 JOIN mine ON mine.id = o.series_id) AS row_durations`,
    );
    expect(folded[0].stored).toEqual(folded[0].rows);
    expect(folded[0].sum_stored).toBeCloseTo(folded[0].sum_rows, 3);
    expect(folded[0].durations).toEqual(folded[0].row_durations);
    // A retry of the whole export is stored and counted once, durations included: the direct
    // COPY meets the unique key and the rows go through the deduplicating statement.
    const deduplicated = writePaths.deduplicated;
    expect(await post(b)).toBe(200);
    expect(writePaths.deduplicated).toBeGreaterThan(deduplicated);
    expect(await stats('lean-busy')).toMatchObject({ spans: 4000, durations: 4000, counted: 4000 });
    const { rows } = await srv.onset.pool.query(
      `SELECT sum(d.durations[1])::float8 AS first FROM span_durations d JOIN series s ON s.id = d.series_id
        WHERE s.service = 'lean-busy'`,
    );
    expect(rows[0].first).toBeGreaterThan(0);
  });

  it('keeps every span of a quiet series as an exemplar', async () => {
    expect(await post(body('lean-quiet', 12, 2))).toBe(200);
    expect(await stats('lean-quiet')).toMatchObject({
      spans: 12,
      exemplars: 12,
      with_attrs: 12,
      durations: 12,
      counted: 12,
    });
  });
});

describe('migrations 0019 and 0020', () => {
  it('carries raw rows stored before it forward: exemplars with their attributes, durations per minute', async () => {
    const url = await createTestDatabase('onset_lean_migration');
    const files = (await readdir(MIGRATIONS)).filter((f) => f.endsWith('.sql')).sort();
    const before = files.filter((f) => f < '0019').length;
    await runner({
      databaseUrl: url,
      dir: MIGRATIONS,
      direction: 'up',
      migrationsTable: 'onset_migrations',
      count: before,
      checkOrder: false,
      log: () => {},
    });
    const pool = createPool(url);
    try {
      for (const day of ['2026-11-23', '2026-11-24'])
        await pool.query(
          `CREATE TABLE observations_p${day.replaceAll('-', '')} PARTITION OF observations
             FOR VALUES FROM ('${day}') TO ('${day}'::date + 1)`,
        );
      await pool.query(
        `INSERT INTO observations (received_day, received_at, trace_id, span_id, series_id, resource_id,
                                   start_time, duration_us, kind, attrs)
         VALUES ('2026-11-23', '2026-11-23T10:00:05Z', '\\x01', '\\x01', 1, 1, '2026-11-23T10:00:01Z', 100, 2, '{"a":"x"}'),
                ('2026-11-23', '2026-11-23T10:00:05Z', '\\x01', '\\x02', 1, 1, '2026-11-23T10:00:30Z', 250, 2, NULL),
                ('2026-11-23', '2026-11-23T10:00:05Z', '\\x01', '\\x03', 2, 1, '2026-11-23T10:00:02Z', 7, 1, NULL),
                ('2026-11-24', '2026-11-24T09:00:00Z', '\\x02', '\\x01', 1, 1, '2026-11-24T08:59:59Z', 42, 3, '{"b":1}')`,
      );
      await migrate(url);
      const { rows: obs } = await pool.query(
        `SELECT encode(span_id, 'hex') AS span, exemplar, attrs FROM observations ORDER BY received_day, span_id`,
      );
      expect(obs).toEqual([
        { span: '01', exemplar: true, attrs: { a: 'x' } },
        { span: '02', exemplar: true, attrs: null },
        { span: '03', exemplar: true, attrs: null },
        { span: '01', exemplar: true, attrs: { b: 1 } },
      ]);
      const { rows: d } = await pool.query(
        `SELECT received_day::text AS day, series_id::int AS series, minute, durations
           FROM span_durations ORDER BY received_day, series_id, minute`,
      );
      expect(d).toEqual([
        {
          day: '2026-11-23',
          series: 1,
          minute: new Date('2026-11-23T10:00:00Z'),
          durations: expect.arrayContaining([100, 250]),
        },
        { day: '2026-11-23', series: 2, minute: new Date('2026-11-23T10:00:00Z'), durations: [7] },
        { day: '2026-11-24', series: 1, minute: new Date('2026-11-24T08:59:00Z'), durations: [42] },
      ]);
      expect(d[0].durations).toHaveLength(2);
      // 0020: each raw partition defaults received_day to its own day (ingest copies into it).
      const { rows: defaults } = await pool.query(
        `SELECT table_name AS t, column_default AS d FROM information_schema.columns
          WHERE table_name LIKE 'observations_p%' AND column_name = 'received_day' ORDER BY 1`,
      );
      expect(defaults).toEqual([
        { t: 'observations_p20261123', d: "'2026-11-23'::date" },
        { t: 'observations_p20261124', d: "'2026-11-24'::date" },
      ]);
      const { rows: idx } = await pool.query(
        `SELECT indexname FROM pg_indexes WHERE tablename = 'observations' ORDER BY 1`,
      );
      expect(idx.map((r) => r.indexname)).toEqual([
        'observations_exemplars',
        'observations_parent',
        'observations_received_at_brin',
        'observations_span',
      ]);
    } finally {
      await pool.end();
    }
  });
});

describe('writeSpans', () => {
  /** Server spans with span ids from..to-1 of one trace, as the decoder encodes them. */
  function rows(from: number, to: number): Buffer {
    const r = new CopyRows(64);
    for (let i = from; i < to; i++) {
      const span = Buffer.alloc(8);
      span.writeUInt32BE(i, 4);
      r.reserve(200);
      r.row(10);
      r.bytes(Buffer.alloc(16, 7));
      r.bytes(span);
      r.null();
      r.int8(1);
      r.int8(1);
      r.timestampMs(Date.now() - 1000);
      r.float8(100 + i);
      r.int2(2);
      r.null();
      r.reserve(5);
      r.bool(false);
    }
    return Buffer.from(r.view());
  }

  it('stores a retry across midnight once: spans stored the day before are not new', async () => {
    const url = await createTestDatabase('onset_lean_midnight');
    await migrate(url);
    const pool = createPool(url);
    const parts = new Partitions(pool);
    const now = Date.now();
    const today = utcDay(now);
    const yesterday = utcDay(now - 86_400_000);
    for (const t of ['observations', 'span_durations'] as const)
      await parts.ensure(t, [yesterday, today]);
    await parts.ensure('histograms', [utcDay(now - 1000)]);
    const client = await pool.connect();
    try {
      expect(await writeSpans(client, [rows(1, 11)], yesterday)).toBe(10);
      const deduplicated = writePaths.deduplicated;
      // Spans 6..10 were stored yesterday; 11..15 are new.
      expect(await writeSpans(client, [rows(6, 16)], today)).toBe(5);
      expect(writePaths.deduplicated).toBe(deduplicated + 1);
      const { rows: c } = await client.query(
        `SELECT (SELECT count(*)::int FROM observations) AS spans,
                (SELECT sum(count)::int FROM histograms) AS counted,
                (SELECT sum(cardinality(durations))::int FROM span_durations) AS durations`,
      );
      expect(c[0]).toEqual({ spans: 15, counted: 15, durations: 15 });
    } finally {
      client.release();
      await pool.end();
    }
  });
});
