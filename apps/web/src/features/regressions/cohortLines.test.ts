import { describe, expect, it } from 'vitest';
import type { RegressionCohortLines } from '@onset/contract';
import { cohortBands, shapeCohortLines } from './cohortLines.ts';

const MIN = 60_000;
const lv = (p50: number, p99: number, count: number) => ({ p50_ms: p50, p99_ms: p99, count });
const resp: RegressionCohortLines = {
  regression_id: '7',
  series_id: '3',
  attribute: 'os.version',
  from: new Date(0).toISOString(),
  to: new Date(10 * MIN).toISOString(),
  step_ms: MIN,
  sides: [
    {
      side: 'slow',
      values: ['4.15.0-36'],
      hosts: ['node-3', 'node-4'],
      levels: { before: lv(20, 25, 100), after: lv(9000, 9900, 90) },
      count: 20,
      columns: {
        t: [0, MIN, 5 * MIN],
        count: [3, 3, 3],
        q: { '0.5': [20, 21, 9000], '0.99': [25, 26, 9900] },
      },
    },
    {
      side: 'fast',
      values: ['4.4.0-138'],
      hosts: ['node-1', 'node-2'],
      levels: { before: lv(19, 24, 100), after: lv(20, 25, 0) },
      count: 20,
      columns: { t: [0, MIN], count: [3, 3], q: { '0.5': [19, 0], '0.99': [24, 26] } },
    },
  ],
};

describe('cohort lines', () => {
  it('draws p50 and p99 of each side on one axis, holes broken, the whole series faint', () => {
    const whole = {
      step_ms: MIN,
      columns: { t: [0, MIN], count: [6, 6], q: { '0.5': [19.5, 20] } },
    };
    const f = shapeCohortLines(resp, whole, { dropNonPositive: true });
    expect(f.lines.map((l) => l.label)).toEqual([
      'slow p50',
      'slow p99',
      'fast p50',
      'fast p99',
      'all hosts p50',
    ]);
    // 0, 1 min, a break at 2 min, 5 min.
    expect(f.x).toEqual([0, 60, 120, 300]);
    expect(f.lines[0]!.values).toEqual([20, 21, null, 9000]);
    // A 0 ms value cannot be drawn on a log scale.
    expect(f.lines[2]!.values).toEqual([19, null, null, null]);
    expect(f.lines[4]!.dash).toBe(true);
    expect(new Set(f.lines.slice(0, 2).map((l) => l.color))).toEqual(new Set(['gap']));
    expect(new Set(f.lines.slice(2, 4).map((l) => l.color))).toEqual(new Set(['server']));
  });

  it("bands each side's levels over its own span; the slow side's are before/after, an empty level none", () => {
    const b = cohortBands(resp, { fromMs: 0, toMs: 10 * MIN }, 4 * MIN);
    expect(b.map((x) => x.key)).toEqual(['before', 'after', 'fast-before']);
    expect(b[1]).toMatchObject({ x0: 240, x1: 600, lo: 9000, hi: 9900 });
    expect(b[1]!.label).toBe('slow hosts after: p50 9.00 s · p99 9.90 s');
    expect(b[2]!.label).toBe('fast hosts before: p50 19.0 ms · p99 24.0 ms');
  });
});
