/**
 * What a transaction's (or a fold's) spans add to `histograms` and `span_durations`
 * (otlp/span-folds.ts), read back from a real PostgreSQL: one histogram row per (series,
 * resource, minute) equal to recording each kept span's duration, one ascending durations array
 * per (series, minute) across resources, nothing of a dropped group, and durations received on
 * the given day.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@onset/testkit';
import { Histogram } from '@onset/core';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { Partitions, utcDay } from '../src/db/partitions.ts';
import { copyIn } from '../src/otlp/copy-in.ts';
import { copyData } from '../src/otlp/copy-rows.ts';
import {
  DURATIONS_COPY_TARGET,
  FoldSum,
  HISTOGRAM_COPY_TARGET,
  type SpanBatch,
} from '../src/otlp/span-folds.ts';

let pool: Pool;
const MINUTE = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000;
const DAY = utcDay(Date.now());

beforeAll(async () => {
  const url = await createTestDatabase('onset_span_folds');
  await migrate(url);
  pool = createPool(url);
  const partitions = new Partitions(pool);
  await partitions.ensure('histograms', [utcDay(MINUTE), DAY]);
  await partitions.ensure('span_durations', [DAY]);
});
afterAll(async () => {
  await pool?.end();
});

/** A deterministic pseudo-random sequence in [0, 1). */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0) / 4294967296;
}

/** `n` spans over `groups` groups and four minutes, with lognormal-ish durations and ties. */
function batch(seed: number, n: number, ids: Array<readonly [number, number] | null>): SpanBatch {
  const r = random(seed);
  const b: SpanBatch = {
    ids,
    group: new Int32Array(n),
    minuteMs: new Float64Array(n),
    durationUs: new Float64Array(n),
  };
  for (let i = 0; i < n; i++) {
    b.group[i] = Math.floor(r() * ids.length);
    b.minuteMs[i] = MINUTE + Math.floor(r() * 4) * 60_000;
    // Every tenth a repeat of 1 ms: equal durations, one bucket.
    b.durationUs[i] = i % 10 === 0 ? 1000 : Math.round(Math.exp(6 + 4 * r()) * 1000) / 1000;
  }
  return b;
}

interface Expected {
  histograms: Map<string, Histogram>;
  durations: Map<string, number[]>;
}

function expected(batches: SpanBatch[]): Expected {
  const histograms = new Map<string, Histogram>();
  const durations = new Map<string, number[]>();
  for (const b of batches)
    for (let i = 0; i < b.group.length; i++) {
      const id = b.ids[b.group[i]!];
      if (!id) continue;
      const hk = `${id[0]}/${id[1]}/${b.minuteMs[i]}`;
      if (!histograms.has(hk)) histograms.set(hk, new Histogram());
      histograms.get(hk)!.record(b.durationUs[i]!);
      const dk = `${id[0]}/${b.minuteMs[i]}`;
      if (!durations.has(dk)) durations.set(dk, []);
      durations.get(dk)!.push(b.durationUs[i]!);
    }
  return { histograms, durations };
}

async function stored(): Promise<Expected & { days: string[] }> {
  const { rows: h } = await pool.query<{
    key: string;
    count: string;
    sum_us: number;
    min_us: number;
    max_us: number;
    idx: number[];
    cnt: number[];
  }>(
    `SELECT series_id || '/' || resource_id || '/' || (extract(epoch FROM minute) * 1000)::int8 AS key,
            count, sum_us, min_us, max_us, idx, cnt FROM histograms`,
  );
  const { rows: d } = await pool.query<{ key: string; durations: number[]; day: string }>(
    `SELECT series_id || '/' || (extract(epoch FROM minute) * 1000)::int8 AS key, durations,
            to_char(received_day, 'YYYY-MM-DD') AS day FROM span_durations WHERE sorted`,
  );
  const histograms = new Map<string, Histogram>();
  for (const r of h) {
    expect(histograms.has(r.key), `one row for ${r.key}`).toBe(false);
    const hist = Histogram.fromSparse({ idx: r.idx, cnt: r.cnt });
    expect(hist.count).toBe(Number(r.count));
    hist.sum = r.sum_us;
    hist.min = r.min_us;
    hist.max = r.max_us;
    histograms.set(r.key, hist);
  }
  const durations = new Map<string, number[]>();
  for (const r of d) {
    expect(durations.has(r.key), `one array for ${r.key}`).toBe(false);
    durations.set(r.key, r.durations);
  }
  return { histograms, durations, days: [...new Set(d.map((r) => r.day))] };
}

describe('span folds', () => {
  it('write one histogram per (series, resource, minute) and one ascending array per (series, minute), dropped groups left out', async () => {
    await pool.query('TRUNCATE histograms, span_durations');
    // Series 1 on two resources, series 2, and a group whose spans are dropped (cardinality).
    const ids = [[1, 10] as const, [1, 11] as const, [2, 10] as const, null];
    const batches = [batch(1, 500, ids), batch(2, 300, ids), batch(3, 1, [[2, 10]])];
    const sum = FoldSum.of(batches.slice(0, 2));
    sum.addSum(FoldSum.of(batches.slice(2)));
    const want = expected(batches);
    const kept = [...want.durations.values()].reduce((n, d) => n + d.length, 0);
    expect(sum.spans).toBe(kept);
    expect(kept).toBeLessThan(801);
    const c = await pool.connect();
    try {
      const { histograms, durations } = sum.rows(DAY);
      await copyIn(c, HISTOGRAM_COPY_TARGET, copyData([histograms]));
      await copyIn(c, DURATIONS_COPY_TARGET, copyData([durations]));
    } finally {
      c.release();
    }
    const got = await stored();
    expect(got.days).toEqual([DAY]);
    // 2 series × 4 minutes for durations, 3 (series, resource) × 4 minutes for histograms.
    expect([...got.durations.keys()].sort()).toEqual([...want.durations.keys()].sort());
    expect(got.durations.size).toBe(8);
    for (const [k, d] of want.durations)
      expect(got.durations.get(k), k).toEqual([...d].sort((a, b) => a - b));
    expect([...got.histograms.keys()].sort()).toEqual([...want.histograms.keys()].sort());
    expect(got.histograms.size).toBe(12);
    for (const [k, h] of want.histograms) {
      const g = got.histograms.get(k)!;
      expect(g.toSparse(), k).toEqual(h.toSparse());
      expect({ count: g.count, min: g.min, max: g.max }, k).toEqual({
        count: h.count,
        min: h.min,
        max: h.max,
      });
      expect(g.sum).toBeCloseTo(h.sum, 6);
    }
  });

  it('write a histogram with more distinct buckets than its scratch space starts with', async () => {
    await pool.query('TRUNCATE histograms, span_durations');
    const r = random(5);
    const n = 20_000;
    const b: SpanBatch = {
      ids: [[3, 12]],
      group: new Int32Array(n),
      minuteMs: new Float64Array(n).fill(MINUTE),
      // From 1 µs to ~2.4 hours: thousands of distinct buckets in one key.
      durationUs: Float64Array.from({ length: n }, () => Math.exp(23 * r())),
    };
    const want = expected([b]).histograms.get(`3/12/${MINUTE}`)!;
    expect(want.toSparse().idx.length).toBeGreaterThan(1000);
    const c = await pool.connect();
    try {
      const { histograms, durations } = FoldSum.of([b]).rows(DAY);
      await copyIn(c, HISTOGRAM_COPY_TARGET, copyData([histograms]));
      await copyIn(c, DURATIONS_COPY_TARGET, copyData([durations]));
    } finally {
      c.release();
    }
    const got = (await stored()).histograms.get(`3/12/${MINUTE}`)!;
    expect(got.toSparse()).toEqual(want.toSparse());
    expect(got.count).toBe(n);
  });

  it('write nothing for batches whose every group is dropped, yet count them as held', async () => {
    const sum = FoldSum.of([batch(4, 50, [null, null])]);
    expect(sum.spans).toBe(0);
    // Their arrays are kept until the rows are written: the memory cap counts them.
    expect(sum.held).toBe(50);
    const { histograms, durations } = sum.rows(DAY);
    expect(histograms.length).toBe(0);
    expect(durations.length).toBe(0);
  });
});
