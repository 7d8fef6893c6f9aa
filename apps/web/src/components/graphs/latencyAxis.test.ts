import { describe, expect, it } from 'vitest';
import {
  linearRange,
  logRange,
  logTicks,
  positiveExtent,
  latencyTickLabels,
} from './latencyAxis.ts';

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
