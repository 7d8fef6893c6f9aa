import { describe, expect, it } from 'vitest';
import { Histogram, bucketIndex } from '@onset/core';
import { shapeQuantiles, lineSummary } from '../src/components/graphs/quantileData.ts';
import { shapeHeatmap, cellIntensity } from '../src/components/graphs/heatmapData.ts';
import {
  alignLines,
  quantileLabel,
  thinFrame,
  withGapBreaks,
} from '../src/components/graphs/latencyFrame.ts';
import {
  linearRange,
  logRange,
  logTicks,
  positiveExtent,
  latencyTickLabels,
} from '../src/components/graphs/latencyAxis.ts';
import {
  stackChips,
  toMarkers,
  versionText,
  deployTitle,
} from '../src/components/graphs/markerData.ts';
import { edgeFrame } from '../src/components/graphs/edgeData.ts';
import type { Deploy, QuantilesColumns } from '@onset/contract';
import { deployOf } from './fixtures.ts';
import { columnsOf } from './columns.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('latency axis', () => {
  it('pads a log range so lines never touch the frame', () => {
    const [lo, hi] = logRange(3.1, 2200);
    expect(lo).toBeLessThan(3.1 / 1.5);
    expect(hi).toBeGreaterThan(2200 * 1.5);
    // Room of 1.6× each side, at most another 2× each side to reach a labelled decade.
    expect(hi / lo).toBeLessThan((2200 / 3.1) * 1.6 * 1.6 * 4);
    expect(lo).toBe(1); // 1.94 snapped down to the decade
  });

  it('shows at least one decade even for a flat line', () => {
    const [lo, hi] = logRange(0.9, 1.1);
    expect(hi / lo).toBeGreaterThanOrEqual(9.99);
    expect(lo).toBeLessThan(0.9);
    expect(hi).toBeGreaterThan(1.1);
  });

  it('labels log ticks in human units, one per decade on wide ranges', () => {
    const ticks = logTicks(0.001, 100_000);
    expect(ticks).toEqual([0.001, 0.01, 0.1, 1, 10, 100, 1000, 10000, 100000]);
    expect(latencyTickLabels(ticks)).toEqual([
      '1 µs',
      '10 µs',
      '100 µs',
      '1 ms',
      '10 ms',
      '100 ms',
      '1 s',
      '10 s',
      '100 s',
    ]);
    expect(latencyTickLabels([2.5, 600_000, 7_200_000])).toEqual(['2.5 ms', '10 min', '2 h']);
  });

  it('adds 2× and 5× ticks when only a couple of decades are shown', () => {
    expect(logTicks(1, 100)).toEqual([1, 2, 5, 10, 20, 50, 100]);
  });

  it('thins decade ticks on very wide ranges (µs to hours)', () => {
    const ticks = logTicks(0.001, 3_600_000);
    expect(ticks.length).toBeLessThanOrEqual(6);
    expect(ticks[0]).toBe(0.001);
  });

  it('finds the positive extent, ignoring nulls, zeros and negatives', () => {
    expect(
      positiveExtent([
        [null, 0, -3, 5],
        [2, null, 7],
      ]),
    ).toEqual([2, 7]);
    expect(positiveExtent([[null, 0]])).toBeNull();
  });

  it('rounds a linear range up from zero', () => {
    expect(linearRange(41.6)).toEqual([0, 50]);
    expect(linearRange(9.5)).toEqual([0, 12]);
  });
});

describe('quantile chart data', () => {
  const resp = (values: Array<[number, number, number] | null>): QuantilesColumns => ({
    series: {
      id: '1',
      service: 's',
      op: 'request',
      view: 'server',
      name: 'n',
      peer: null,
      hosts: [],
      first_seen: iso(T0),
      last_seen: iso(T0),
    },
    from: iso(T0),
    to: iso(T0 + values.length * 60_000),
    step_ms: 60_000,
    columns: columnsOf(
      values.flatMap((v, i) =>
        v ? [{ t: T0 + i * 60_000, count: v[0], q: { '0.5': v[1], '0.99': v[2] } }] : [],
      ),
    ),
  });

  it('makes one line per quantile and a count column, x in seconds', () => {
    const f = shapeQuantiles(
      resp([
        [10, 1, 2],
        [12, 1.1, 2.5],
      ]),
    );
    expect(f.x).toEqual([T0 / 1000, T0 / 1000 + 60]);
    expect(f.lines.map((l) => l.label)).toEqual(['p50', 'p99']);
    expect(f.lines[1]!.values).toEqual([2, 2.5]);
    expect(f.count).toEqual([10, 12]);
  });

  it('breaks lines across missing steps instead of joining them', () => {
    const f = shapeQuantiles(resp([[1, 1, 2], null, null, [1, 40, 41]]));
    expect(f.x).toEqual([T0 / 1000, T0 / 1000 + 60, T0 / 1000 + 180]);
    expect(f.lines[0]!.values).toEqual([1, null, 40]);
  });

  it('tells a contiguous answer from one with a hole and an extra step of the same length and span', () => {
    const full = shapeQuantiles(
      resp([
        [1, 1, 2],
        [1, 2, 3],
        [1, 3, 4],
      ]),
    );
    expect(full.x).toEqual([0, 60, 120].map((d) => T0 / 1000 + d));
    // Same count of points and same span, but one hole and one extra: must not be taken for contiguous.
    const odd = shapeQuantiles({
      step_ms: 60_000,
      columns: columnsOf(
        [0, 90_000, 120_000].map((d) => ({ t: T0 + d, count: 1, q: { '0.5': 1 } })),
      ),
    });
    expect(odd.x).toEqual([T0 / 1000, T0 / 1000 + 90, T0 / 1000 + 120]);
  });

  it('drops non-positive values for log scales only', () => {
    const r = resp([[1, 0, 2]]);
    expect(shapeQuantiles(r, { dropNonPositive: true }).lines[0]!.values).toEqual([null]);
    expect(shapeQuantiles(r).lines[0]!.values).toEqual([0]);
  });

  it('keeps only the requested quantiles, in order', () => {
    const f = shapeQuantiles(resp([[1, 1, 2]]), { quantiles: ['0.99'] });
    expect(f.lines.map((l) => l.key)).toEqual(['0.99']);
  });

  it('shapes 43,200 points × 3 quantiles quickly', () => {
    const columns = columnsOf(
      Array.from({ length: 43_200 }, (_, i) => ({
        t: T0 + i * 60_000,
        count: 100,
        q: { '0.5': 1, '0.9': 2, '0.99': 3 },
      })),
    );
    const t = performance.now();
    const f = shapeQuantiles({ step_ms: 60_000, columns });
    const ms = performance.now() - t;
    expect(f.x).toHaveLength(43_200);
    expect(f.lines).toHaveLength(3);
    expect(ms).toBeLessThan(1000); // a sanity bound only; bench/ui measures it
  });

  it('names quantiles the way people say them', () => {
    expect(quantileLabel('0.5')).toBe('p50');
    expect(quantileLabel('0.999')).toBe('p99.9');
  });

  it('summarises a line', () => {
    expect(lineSummary([null, 3, 1, null, 2, null])).toEqual({ last: 2, min: 1, max: 3 });
  });
});

describe('aligning several lines', () => {
  it('aligns on the union of steps and breaks at holes', () => {
    const f = alignLines(
      [
        {
          key: 'a',
          label: 'a',
          color: 'client',
          points: [
            { tMs: T0, v: 1 },
            { tMs: T0 + 60_000, v: 2 },
          ],
        },
        {
          key: 'b',
          label: 'b',
          color: 'server',
          points: [
            { tMs: T0 + 60_000, v: 3 },
            { tMs: T0 + 300_000, v: 4 },
          ],
        },
      ],
      60_000,
    );
    expect(f.x).toEqual([T0, T0 + 60_000, T0 + 120_000, T0 + 300_000].map((t) => t / 1000));
    expect(f.lines[0]!.values).toEqual([1, 2, null, null]);
    expect(f.lines[1]!.values).toEqual([null, 3, null, 4]);
  });

  it('inserts exactly one break per hole', () => {
    expect(withGapBreaks([0, 60, 120, 600], 60)).toEqual([0, 60, 120, 180, 600]);
  });
});

describe('thinning long frames to pixel resolution', () => {
  const frame = (values: Array<number | null>) => ({
    x: values.map((_, i) => i * 60),
    lines: [{ key: 'a', label: 'a', color: 'p50' as const, values }],
    count: values.map(() => 5),
    stepMs: 60_000,
  });

  it('leaves short frames alone', () => {
    const f = frame([1, 2, 3]);
    const t = thinFrame(f, 10);
    expect(t.thinned).toBe(false);
    expect(t.lines[0]!.values).toBe(f.lines[0]!.values);
  });

  it('keeps every spike and dip, in time order, and the same x for all lines', () => {
    const values = Array.from({ length: 10_000 }, (_, i) =>
      i === 4321 ? 900 : i === 7000 ? 0.01 : 1,
    );
    const t = thinFrame(frame(values), 100);
    expect(t.thinned).toBe(true);
    expect(t.x.length).toBe(200);
    expect(t.lines[0]!.values.length).toBe(200);
    expect(Math.max(...(t.lines[0]!.values as number[]))).toBe(900);
    expect(Math.min(...(t.lines[0]!.values as number[]))).toBe(0.01);
    // The spike's bucket shows it where it was: within that bucket's time span.
    const at = t.lines[0]!.values.indexOf(900);
    expect(Math.abs(t.x[at]! - 4321 * 60)).toBeLessThanOrEqual(100 * 60);
    for (let i = 1; i < t.x.length; i++) expect(t.x[i]!).toBeGreaterThanOrEqual(t.x[i - 1]!);
  });

  it('keeps gaps longer than a bucket as gaps', () => {
    const values = Array.from({ length: 1000 }, (_, i) => (i >= 400 && i < 600 ? null : 2));
    const t = thinFrame(frame(values), 50);
    expect(t.lines[0]!.values.filter((v) => v === null).length).toBeGreaterThanOrEqual(18);
  });

  it('thins 43,200 points × 3 lines to 4,000 each', () => {
    const values = Array.from({ length: 43_200 }, (_, i) => 1 + (i % 97));
    const f = {
      ...frame(values),
      lines: [0, 1, 2].map((k) => ({
        key: String(k),
        label: String(k),
        color: 'p50' as const,
        values,
      })),
    };
    const t = thinFrame(f);
    expect(t.x.length).toBeLessThanOrEqual(4000);
    expect(t.lines.every((l) => l.values.length === t.x.length)).toBe(true);
    expect(t.count!.length).toBe(t.x.length);
  });
});

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

describe('deploy markers', () => {
  const d = (id: string, atMs: number, extra: Partial<Deploy> = {}): Deploy =>
    deployOf({ id, kind: 'code', at: iso(atMs), ...extra });

  it('keeps markers in range and flags the ranked suspects', () => {
    const ms = toMarkers(
      [
        d('1', T0 - 1),
        d('2', T0 + 10, {
          kind: 'dependency',
          component: 'hyper',
          from_version: '0.12.35',
          to_version: '0.13.1',
        }),
        d('3', T0 + 20),
      ],
      { fromMs: T0, toMs: T0 + 100 },
      [
        { deploy_id: '2', reason: 'only version change on the callee before the onset' },
        { deploy_id: '3' },
      ],
    );
    expect(ms.map((m) => m.id)).toEqual(['3', '2']); // the top suspect last, drawn on top
    const top = ms.find((m) => m.id === '2')!;
    expect(top.suspectRank).toBe(1);
    expect(top.reason).toMatch(/callee/);
    expect(top.label).toBe('dependency hyper 0.12.35 → 0.13.1');
    expect(ms.find((m) => m.id === '3')!.suspectRank).toBe(2);
  });

  it('describes versions and where a change happened', () => {
    expect(
      versionText({ component: 'linux', from_version: '4.4.0-138', to_version: '4.15.0-36' }),
    ).toBe('linux 4.4.0-138 → 4.15.0-36');
    expect(versionText({ commit: '9f2c1e0aaaaaaaaaaaaa' })).toBe('9f2c1e0aaaaa');
    expect(
      deployTitle(d('1', T0, { kind: 'kernel', hosts: ['a', 'b', 'c', 'd'], to_version: '4.15' })),
    ).toBe('kernel 4.15 (a, b, c +1 more)');
  });

  it('stacks overlapping chips in rows', () => {
    expect(stackChips([10, 12, 100, 14], 18)).toEqual([0, 1, 0, 2]);
  });
});

describe('edge views', () => {
  // Which series are the views, their medians and the verdict are the server's (core edges.test.ts).
  const view = (v: 'client' | 'server' | 'gap', values: number[] | null) => ({
    view: v,
    series: null,
    columns: values
      ? {
          t: values.map((_, i) => T0 + i * 60_000),
          count: values.map(() => 1),
          q: { '0.5': values },
        }
      : null,
    summary: {},
  });

  it('lines up the reported views of the server answer on one time axis', () => {
    const frame = edgeFrame(
      {
        series_id: '1',
        caller: 'checkout',
        callee: 'urlite',
        from: new Date(T0).toISOString(),
        to: new Date(T0 + 3 * 60_000).toISOString(),
        step_ms: 60_000,
        views: [view('client', [1, 41, 41]), view('server', null), view('gap', [0.2, 40.2, 40.2])],
        verdict: {},
      },
      '0.5',
    );
    expect(frame.lines.map((l) => [l.key, l.dash ?? false])).toEqual([
      ['client', false],
      ['gap', false],
    ]);
    expect(frame.lines[0]!.values).toEqual([1, 41, 41]);
  });
});
