import { describe, expect, it } from 'vitest';
import { shapeQuantiles, lineSummary } from './quantileData.ts';
import { quantileLabel } from './latencyFrame.ts';
import type { QuantilesColumns } from '@onset/contract';
import { columnsOf } from '../../../test/columns.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

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
      calls_from: 'spans',
      metrics_not_counted: false,
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
