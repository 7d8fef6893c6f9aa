import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Histogram, bucketIndex, bucketValue, ZERO_BUCKET } from '../src/histogram.ts';

function exactQuantile(sorted: number[], q: number): number {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

// Heavy-tailed generator: lognormal body with Pareto tail, spanning µs to hours.
const heavyTailed = fc
  .tuple(
    fc.double({ min: 0, max: 22, noNaN: true }), // log-scale centre: e^0 µs .. e^22 µs (~1 h)
    fc.double({ min: 0.1, max: 3, noNaN: true }), // spread
    fc.array(
      fc.tuple(
        fc.double({ min: 1e-9, max: 1, noNaN: true }),
        fc.double({ min: -1, max: 1, noNaN: true }),
      ),
      {
        minLength: 50,
        maxLength: 3000,
      },
    ),
  )
  .map(([mu, sigma, draws]) =>
    draws.map(([u, z]) => {
      const body = Math.exp(mu + sigma * z * 2);
      // One in ten draws comes from a Pareto tail (alpha 1.2).
      return u < 0.1 ? body * Math.pow(u * 10, -1 / 1.2) : body;
    }),
  );

describe('Histogram', () => {
  it('keeps every quantile within 2% of the exact sample quantile on heavy-tailed data', () => {
    fc.assert(
      fc.property(heavyTailed, fc.double({ min: 0.001, max: 0.999, noNaN: true }), (values, q) => {
        const h = new Histogram();
        for (const v of values) h.record(v);
        const sorted = [...values].sort((a, b) => a - b);
        for (const qq of [q, 0.5, 0.9, 0.99, 0.999]) {
          const exact = exactQuantile(sorted, qq);
          const est = h.quantile(qq);
          expect(Math.abs(est - exact) / exact).toBeLessThanOrEqual(0.02);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('merging two histograms equals the histogram of the union', () => {
    fc.assert(
      fc.property(heavyTailed, heavyTailed, (a, b) => {
        const ha = new Histogram();
        const hb = new Histogram();
        const hu = new Histogram();
        a.forEach((v) => (ha.record(v), hu.record(v)));
        b.forEach((v) => (hb.record(v), hu.record(v)));
        ha.merge(hb);
        expect(ha.toSparse()).toEqual(hu.toSparse());
        expect(ha.count).toBe(hu.count);
        for (const q of [0.1, 0.5, 0.99]) expect(ha.quantile(q)).toBe(hu.quantile(q));
      }),
      { numRuns: 100 },
    );
  });

  it('does not clip at 1 µs or at 10 hours', () => {
    const tenHoursUs = 10 * 3600 * 1e6;
    for (const v of [1, 1.5, tenHoursUs, tenHoursUs * 3]) {
      const h = new Histogram();
      h.record(v);
      h.record(v * 1.0001);
      expect(Math.abs(h.quantile(0.5) - v) / v).toBeLessThanOrEqual(0.02);
    }
    // distinct far-apart values stay distinct (no saturation bucket)
    expect(bucketIndex(tenHoursUs)).toBeLessThan(bucketIndex(tenHoursUs * 2));
    expect(bucketIndex(1)).toBeGreaterThan(bucketIndex(0.5));
  });

  it('puts zero and negative values in the zero bucket', () => {
    expect(bucketIndex(0)).toBe(ZERO_BUCKET);
    expect(bucketIndex(-5)).toBe(ZERO_BUCKET);
    expect(bucketValue(ZERO_BUCKET)).toBe(0);
  });

  it('gives every bucket the value 2γ^i/(γ+1), inside and past the precomputed range, within α of the bucket', () => {
    const GAMMA = 1.01 / 0.99;
    for (const i of [-5000, -1025, -1024, -349, -1, 0, 1, 700, 1215, 3071, 3072, 9000]) {
      expect(bucketValue(i)).toBe((2 * Math.pow(GAMMA, i)) / (GAMMA + 1));
    }
    for (const us of [0.002, 1, 3.7, 1234.5, 3.6e10]) {
      expect(Math.abs(bucketValue(bucketIndex(us)) - us) / us).toBeLessThanOrEqual(0.01 + 1e-12);
    }
  });

  it('round-trips through the sparse form', () => {
    const h = new Histogram();
    [3, 3, 50, 9000, 1e9].forEach((v) => h.record(v));
    const s = h.toSparse();
    expect(s.idx).toEqual([...s.idx].sort((x, y) => x - y));
    const back = Histogram.fromSparse(s);
    expect(back.count).toBe(5);
    expect(Math.abs(back.quantile(0.5) - 50) / 50).toBeLessThanOrEqual(0.02);
  });
});
