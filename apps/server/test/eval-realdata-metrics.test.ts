/**
 * eval:realdata scores detectors with TCPDBench's F1 and cover
 * (bench/eval-realdata/metrics.ts). These are the examples in TCPDBench's
 * own metrics.py: a reimplementation that drifted from them (a margin, the
 * index 0 added to every set, one match per true point, the mean over
 * annotators) would score every method differently from the published
 * numbers it is compared with.
 */
import { describe, expect, it } from 'vitest';
import { cleanPredictions, coverScore, f1Score } from '../../../bench/eval-realdata/metrics.ts';

describe('TCPDBench metrics', () => {
  it('F1 as in metrics.py', () => {
    expect(f1Score({ 1: [10, 20], 2: [11, 20], 3: [10], 4: [0, 5] }, [10, 20]).f1).toBe(1);
    expect(f1Score({ 1: [], 2: [10], 3: [50] }, [10]).f1).toBeCloseTo(0.9090909090909091, 12);
    expect(f1Score({ 1: [], 2: [10], 3: [50] }, []).f1).toBeCloseTo(0.8, 12);
  });

  it('a prediction matches one true point only, within 5 points', () => {
    // 10 and 12 are both within the margin of 11, which can be matched once.
    const r = f1Score({ 1: [11] }, [10, 12]);
    expect(r.precision).toBeCloseTo(2 / 3, 12);
    expect(r.recall).toBe(1);
    expect(f1Score({ 1: [20] }, [26]).recall).toBe(0.5);
  });

  it('cover as in metrics.py', () => {
    expect(coverScore({ 1: [10, 20], 2: [10], 3: [0, 5] }, [10, 20], 45)).toBeCloseTo(
      0.7962962962962963,
      12,
    );
    expect(coverScore({ 1: [], 2: [10], 3: [40] }, [10], 45)).toBeCloseTo(0.7954144620811286, 12);
    expect(coverScore({ 1: [], 2: [10], 3: [40] }, [], 45)).toBeCloseTo(0.8189300411522634, 12);
  });

  it('scores only distinct points inside the series', () => {
    expect(cleanPredictions([0, 5, 5, 44, 3], 45)).toEqual([3, 5]);
  });
});
