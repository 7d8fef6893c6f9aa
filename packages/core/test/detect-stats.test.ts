import { mulberry32Open } from '@onset/testkit/random';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  binomial,
  exactUpperTail,
  exceedanceTest,
  gvsUpper,
  mannWhitneyGreater,
  median,
  normalQuantile,
  normalUpperTail,
  orderStatisticZ,
  robustTrend,
} from '../src/detect/stats.ts';

/** Every way to choose which of m+n ranks belong to the first sample. */
function* arrangements(m: number, n: number): Generator<number[]> {
  const N = m + n;
  const pick: number[] = [];
  function* rec(start: number): Generator<number[]> {
    if (pick.length === m) {
      yield [...pick];
      return;
    }
    for (let i = start; i < N; i++) {
      pick.push(i);
      yield* rec(i + 1);
      pick.pop();
    }
  }
  yield* rec(0);
}

const seeded = mulberry32Open;

describe('exact Mann-Whitney tail', () => {
  it('equals the share of arrangements with U at least mn - deficit (brute force)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 0, max: 40 }),
        (m, n, deficit) => {
          const d = Math.min(deficit, m * n);
          let hits = 0;
          let total = 0;
          for (const ranks of arrangements(m, n)) {
            // U = pairs (hi, lo) with hi above lo; ranks are positions in ascending order.
            let u = 0;
            const set = new Set(ranks);
            for (const r of ranks) for (let q = 0; q < r; q++) if (!set.has(q)) u++;
            total++;
            if (u >= m * n - d) hits++;
          }
          expect(exactUpperTail(Math.min(m, n), Math.max(m, n), d)).toBeCloseTo(hits / total, 12);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('gives the textbook p-value when every new point beats every old one', () => {
    // 4 new points above all 60 history points: 1 / C(64, 4).
    const hi = [10, 11, 12, 13];
    const lo = Array.from({ length: 60 }, (_, i) => i / 10);
    expect(mannWhitneyGreater(hi, lo)).toBeCloseTo(1 / binomial(64, 4), 15);
    expect(mannWhitneyGreater(lo, hi)).toBeGreaterThan(0.99);
  });

  it('keeps its false-positive rate at or under the nominal level on exchangeable data', () => {
    const rnd = seeded(7);
    let rejections = 0;
    const trials = 2000;
    for (let t = 0; t < trials; t++) {
      const m = 3 + Math.floor(rnd() * 30);
      const n = 8 + Math.floor(rnd() * 100);
      // Heavy-tailed and bucketed (ties), like quantiles read from histograms.
      const draw = () => Math.round(Math.log(-Math.log(rnd())) * 20) / 20;
      const a = Array.from({ length: m }, draw);
      const b = Array.from({ length: n }, draw);
      if (mannWhitneyGreater(a, b) < 0.05) rejections++;
    }
    expect(rejections / trials).toBeLessThan(0.06);
  });
});

describe('exceedance test', () => {
  it('matches brute force over all arrangements', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 7 }),
        fc.boolean(),
        (m, n, r0, up) => {
          const r = Math.min(r0, n);
          const N = m + n;
          // For each arrangement, count "after" points above the r-th largest "before" point.
          const counts = new Map<number, number>();
          let total = 0;
          for (const ranks of arrangements(m, n)) {
            const set = new Set(ranks);
            const before = [...Array(N).keys()].filter((i) => !set.has(i));
            const theta = before[n - r]!;
            const x = ranks.filter((i) => i > theta).length;
            counts.set(x, (counts.get(x) ?? 0) + 1);
            total++;
          }
          for (let x = 0; x <= m; x++) {
            // Build data with exactly x after-points above the threshold.
            const before = Array.from({ length: n }, (_, i) => i * 10);
            const theta = before[n - r]!;
            const after = Array.from({ length: m }, (_, i) => (i < x ? theta + 1 + i : -1 - i));
            let tail = 0;
            for (const [k, c] of counts) if (up ? k >= x : k <= x) tail += c;
            expect(exceedanceTest(after, before, r, up ? 1 : -1)).toBeCloseTo(tail / total, 12);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('gvsUpper (counts only, for a long history kept as its top values) agrees with the test on data', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 2, max: 300 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 40 }),
        (m, n, r0, x0) => {
          const r = Math.min(r0, n);
          const x = Math.min(x0, m);
          const before = Array.from({ length: n }, (_, i) => i * 10);
          const theta = before[n - r]!;
          const after = Array.from({ length: m }, (_, i) => (i < x ? theta + 1 + i : -1 - i));
          expect(gvsUpper(n, r, m, x)).toBeCloseTo(exceedanceTest(after, before, r, 1), 12);
        },
      ),
      { numRuns: 200 },
    );
    // Five of 40 new minutes beyond the second largest of 700 are rare by
    // chance (p ≈ 2e-6); beyond the second largest of 120, not (p ≈ 4e-3).
    expect(gvsUpper(700, 2, 40, 5)).toBeLessThan(5e-6);
    expect(gvsUpper(120, 2, 40, 5)).toBeGreaterThan(1e-3);
  });
});

describe('helpers', () => {
  it('normalQuantile inverts the normal tail', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-9, max: 1 - 1e-9, noNaN: true }), (p) => {
        const z = normalQuantile(p);
        expect(1 - normalUpperTail(z)).toBeCloseTo(p, 6);
      }),
    );
  });

  it('orderStatisticZ: the "p99" of a few events sits far below the 99th percentile', () => {
    expect(orderStatisticZ(0.99, 1)).toBeCloseTo(0, 9); // one event: its median
    expect(orderStatisticZ(0.99, 5)).toBeCloseTo(normalQuantile(5 / 6), 9);
    expect(orderStatisticZ(0.99, 1000)).toBeGreaterThan(2.2);
    expect(orderStatisticZ(0.5, 1001)).toBeCloseTo(0, 9);
  });

  it('robustTrend recovers a ramp despite one point in eight being wild', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -0.01, max: 0.01, noNaN: true }),
        fc.integer({ min: 1, max: 1_000_000 }),
        (slope, seed) => {
          const rnd = seeded(seed);
          const x = Array.from({ length: 80 }, (_, i) => i);
          const y = x.map((xi) => 2 + slope * xi + (rnd() - 0.5) * 0.01 + (rnd() < 0.125 ? 3 : 0));
          const fit = robustTrend(x, y);
          expect(Math.abs(fit.slope - slope)).toBeLessThan(0.0025);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('median', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});
