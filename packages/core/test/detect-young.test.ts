/**
 * Young series (docs/detection.md "Young series", young.ts): a step in a
 * series' first minutes, with only 6 points after it, is confirmed; a
 * young series without a change reports nothing.
 */
import { mulberry32Open } from '@onset/testkit/random';
import { describe, expect, it } from 'vitest';
import { bucketIndex, bucketValue, detectSteps, type MinutePoint } from '../src/index.ts';

const T0 = Date.UTC(2026, 10, 1);

/** Minutes of `rate` events (lognormal, σ 0.5), every event ×factor from minute `at` on; quantiles as the histograms read them. */
function young(n: number, rate: number, at: number, factor: number, seed: number): MinutePoint[] {
  const u = mulberry32Open(seed);
  const z = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  const out: MinutePoint[] = [];
  for (let m = 0; m < n; m++) {
    const xs: number[] = [];
    for (let i = 0; i < rate; i++)
      xs.push(bucketValue(bucketIndex(2000 * Math.exp(0.5 * z()) * (m >= at ? factor : 1))));
    xs.sort((a, b) => a - b);
    const q = (f: number) => xs[Math.max(1, Math.ceil(f * rate)) - 1]!;
    out.push({ t: T0 + m * 60_000, count: rate, p50: q(0.5), p99: q(0.99) });
  }
  return out;
}

const opts = { minRatio: 1.2 };

describe('young series', () => {
  it('a ×2.5 step after 10 points is confirmed on its 6th point, either way', () => {
    for (const seed of [1, 2, 3, 4]) {
      for (const factor of [2.5, 1 / 2.5]) {
        const pts = young(16, 50, 10, factor, seed);
        const cs = detectSteps(pts, opts);
        expect(cs, `seed ${seed} ×${factor}`).toHaveLength(1);
        const c = cs[0]!;
        expect(c.direction).toBe(factor > 1 ? 'regression' : 'improvement');
        expect(Math.abs(c.index - 10)).toBeLessThanOrEqual(1);
        expect(c.detectedIndex).toBeLessThanOrEqual(15);
      }
    }
  });

  it('past its 24th point, a sparse ×2.5 step is confirmed on its 8th point at the usual alpha', () => {
    // Cases the alarm path's every-point retests had left unconfirmed by then.
    for (const [rate, factor, seed] of [
      [5, 2.5, 1],
      [15, 0.4, 2],
    ] as const) {
      const cs = detectSteps(young(36, rate, 28, factor, seed), opts);
      expect(cs, `${rate}/min ×${factor} seed ${seed}`).toHaveLength(1);
      expect(Math.abs(cs[0]!.index - 28)).toBeLessThanOrEqual(1);
      expect(cs[0]!.detectedIndex).toBeLessThanOrEqual(35);
    }
  });

  it('young series without a change report nothing', () => {
    for (let seed = 1; seed <= 40; seed++)
      for (const rate of [5, 50])
        expect(detectSteps(young(40, rate, 999, 1, seed), opts), `seed ${seed}`).toEqual([]);
  });
});
