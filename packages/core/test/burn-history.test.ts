/**
 * Burn-rate and budget history (moved from the web's errorBudget tests when
 * the server took over the SLO charts' maths: same cases, now in core).
 */
import { describe, expect, it } from 'vitest';
import {
  budgetExhaustionMs,
  budgetHistory,
  bucketIndex,
  countsFromHistogram,
  denseCounts,
  historyStepMs,
  rollingBurn,
} from '../src/index.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const MIN = 60_000;
const rolling = (w: number) => (end: number) => end - w;

describe('burn and budget history', () => {
  it('counts events over the threshold per histogram', () => {
    const h = { idx: [bucketIndex(10_000), bucketIndex(500_000)], cnt: [99, 1] };
    const c = countsFromHistogram(h, 100_000);
    expect(c.total).toBe(100);
    expect(c.good).toBeCloseTo(99, 9);
  });

  it('computes the burn rate over a rolling window', () => {
    // 1% bad against a 99% objective burns at exactly 1×; 10% bad at 10×.
    const counts = [1, 1, 1, 10, 10, 10].map((badPct, i) => ({
      tMs: T0 + i * MIN,
      total: 100,
      good: 100 - badPct,
    }));
    const burn = rollingBurn(counts, MIN, 3 * MIN, 0.99);
    expect(burn[0]).toBeNull();
    expect(burn[1]).toBeNull();
    expect(burn[2]).toBeCloseTo(1, 9);
    expect(burn[5]).toBeCloseTo(10, 9);
    expect(burn[4]).toBeCloseTo(7, 9);
  });

  it('has no burn rate without traffic', () => {
    expect(rollingBurn([{ tMs: T0, total: 0, good: 0 }], MIN, MIN, 0.99)).toEqual([null]);
  });

  it('spends the budget: 1 − burn over the SLO window', () => {
    const counts = denseCounts(
      [
        { tMs: T0, total: 100, good: 98 },
        { tMs: T0 + MIN, total: 100, good: 100 },
      ],
      MIN,
      T0,
      T0 + 2 * MIN,
    );
    // 2 bad of 200 against a 1% allowance: the whole budget is spent.
    const b = budgetHistory(counts, MIN, 0.99, rolling(2 * MIN));
    expect(b[0]).toBeNull();
    expect(b[1]).toBeCloseTo(0, 9);
    expect(budgetHistory(counts, MIN, 0.98, rolling(2 * MIN))[1]).toBeCloseTo(0.5, 9);
  });

  it('restarts a calendar budget at the period start', () => {
    const counts = [0, 1, 2, 3].map((i) => ({
      tMs: T0 + i * MIN,
      total: 100,
      good: i < 2 ? 99 : 100,
    }));
    // Periods of two minutes starting at T0: the third step opens a fresh, clean period.
    const periodStart = (end: number) => T0 + Math.floor((end - 1 - T0) / (2 * MIN)) * 2 * MIN;
    const b = budgetHistory(counts, MIN, 0.98, periodStart);
    expect(b[0]).toBeCloseTo(0.5, 9);
    expect(b[1]).toBeCloseTo(0.5, 9);
    expect(b[2]).toBe(1);
    expect(b[3]).toBe(1);
  });

  it('fills holes with empty steps so windows measure time', () => {
    const d = denseCounts([{ tMs: T0 + 2 * MIN, total: 5, good: 4 }], MIN, T0, T0 + 3 * MIN);
    expect(d.map((c) => c.total)).toEqual([0, 0, 5]);
  });

  it('says when the budget runs out at the current burn', () => {
    expect(budgetExhaustionMs(0.5, 14.4, 28 * 86_400_000)).toBeCloseTo(
      (0.5 * 28 * 86_400_000) / 14.4,
      3,
    );
    expect(budgetExhaustionMs(0.5, 0, 1)).toBeNull();
    expect(budgetExhaustionMs(0, 3, 1)).toBeNull();
  });

  it('keeps history answers under a thousand steps', () => {
    for (const range of [3_600_000, 6 * 3_600_000, 7 * 86_400_000, 30 * 86_400_000])
      for (const back of [3 * 86_400_000, 28 * 86_400_000])
        expect((range + back) / historyStepMs(range, back)).toBeLessThanOrEqual(1000);
  });
});
