/** Levels and ratios as a regression row stores them (ms, rounded), from the detector's µs. */
import type { Cohort, Level } from '@onset/contract';
import { detectOptionsFor } from '@onset/core';

export function level(l: { p50: number; p99: number; count: number }): Level {
  return { p50_ms: roundMs(l.p50 / 1000), p99_ms: roundMs(l.p99 / 1000), count: l.count };
}

export function ratio(before: number, after: number, floorMs: number): number {
  const r = before > 0 ? after / before : (after + floorMs) / (before + floorMs || 1);
  return round(r, 3);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
}

export const round = (x: number, digits: number) => Number(x.toFixed(digits));
export const roundMs = (ms: number) => Number(ms.toPrecision(4));
export const fmtMs = (ms: number) => String(Number(ms.toPrecision(3)));

/**
 * The headline levels of a regression: when the step is confined to a cohort,
 * the slow cohort's p50 and p99 (a mix of fast and slow hosts jumps between both from
 * minute to minute), with the whole series' beside them in `series_levels`.
 */
export function headlineLevels(r: {
  view: string;
  before: Level;
  after: Level;
  ratio_p50: number;
  ratio_p99: number;
  cohort: Cohort | null;
}): {
  before: Level;
  after: Level;
  ratio_p50: number;
  ratio_p99: number;
  series_levels: { before: Level; after: Level; ratio_p50: number; ratio_p99: number } | null;
} {
  const whole = {
    before: r.before,
    after: r.after,
    ratio_p50: r.ratio_p50,
    ratio_p99: r.ratio_p99,
  };
  const slow = r.cohort?.levels?.slow;
  if (!slow || !slow.before.count || !slow.after.count) return { ...whole, series_levels: null };
  const floorMs = (detectOptionsFor(r.view).floor ?? 0) / 1000;
  // Counts stay the whole series' (after: events since the onset, growing with every pass);
  // the cohort's own are in cohort.levels.
  return {
    before: { ...slow.before, count: r.before.count },
    after: { ...slow.after, count: r.after.count },
    ratio_p50: ratio(slow.before.p50_ms, slow.after.p50_ms, floorMs),
    ratio_p99: ratio(slow.before.p99_ms, slow.after.p99_ms, floorMs),
    series_levels: whole,
  };
}
