import { describe, expect, it } from 'vitest';
import { Histogram, bucketIndex } from '@onset/core';
import { shapeHeatmap, cellIntensity } from './heatmapData.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('heatmap data', () => {
  const hist = (valuesUs: number[]) => {
    const h = new Histogram();
    for (const v of valuesUs) h.record(v);
    return h.toSparse();
  };

  it('puts each observation in the log row of its latency', () => {
    const f = shapeHeatmap(
      [
        // Values in the middle of their rows (log10 = x.05 or x.35), away from row edges.
        { t: iso(T0), count: 3, ...hist([1122, 1122, 11_220]) },
        { t: iso(T0 + 60_000), count: 1, ...hist([2_239_000]) },
      ],
      60_000,
      10,
    );
    expect(f.total).toBe(4);
    expect(f.x).toEqual([T0 / 1000, T0 / 1000 + 60]);
    const rowOf = (ms: number) => f.rows.findIndex((r) => ms >= r.loMs && ms < r.hiMs);
    const n = f.rows.length;
    expect(f.counts[0 * n + rowOf(1.122)]).toBe(2);
    expect(f.counts[0 * n + rowOf(11.22)]).toBe(1);
    expect(f.counts[1 * n + rowOf(2239)]).toBe(1);
    expect(f.maxCount).toBe(2);
    // Rows are contiguous log intervals, 10 per decade, from 1 ms to 2.5 s.
    expect(f.rows[0]!.loMs).toBeCloseTo(1, 6);
    expect(n).toBe(34);
    for (let i = 1; i < n; i++) expect(f.rows[i]!.loMs).toBeCloseTo(f.rows[i - 1]!.hiMs, 9);
    expect(f.rows[n - 1]!.hiMs).toBeGreaterThan(2239);
  });

  it('counts zero/negative gap values apart (a log axis cannot show them)', () => {
    const f = shapeHeatmap(
      [{ t: iso(T0), count: 2, idx: [bucketIndex(0), bucketIndex(500)], cnt: [1, 1] }],
      60_000,
    );
    expect(f.nonPositive).toBe(1);
    expect(f.total).toBe(1);
  });

  it('is empty without data', () => {
    const f = shapeHeatmap([], 60_000);
    expect(f.rows).toEqual([]);
    expect(f.maxCount).toBe(0);
  });

  it('colours by log count so rare slow calls stay visible', () => {
    expect(cellIntensity(0, 100)).toBe(0);
    expect(cellIntensity(1, 1_000_000)).toBeGreaterThan(0.15);
    expect(cellIntensity(1_000_000, 1_000_000)).toBe(1);
    expect(cellIntensity(10, 1000)).toBeLessThan(cellIntensity(100, 1000));
  });
});
