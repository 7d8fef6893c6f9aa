/**
 * Burn-rate and error-budget history for SLO charts: per-step good/total
 * counts in, one value per step out (the window ending at the end of that
 * step). The server computes these (GET /api/v1/slos/{id}/history) so every
 * chart draws the same maths the alerts use; the UI only draws them.
 */
import type { SparseHistogram } from '../histogram.ts';
import { burnRate, type Counts } from './rates.ts';
import { estimateGoodFromHistogram } from './suggest.ts';

/** Good and total events of one step starting at tMs. */
export interface StepCounts extends Counts {
  tMs: number;
}

/** Events of one histogram at or under the threshold (good) and in all (total), bucket-estimated (≤ 2%). */
export function countsFromHistogram(h: SparseHistogram, thresholdUs: number): Counts {
  let total = 0;
  for (const c of h.cnt) total += c;
  return { good: Math.min(total, estimateGoodFromHistogram(h, thresholdUs)), total };
}

/** One entry per step from floor(fromMs) to toMs, missing steps empty, so rolling windows measure time, not rows. */
export function denseCounts(
  counts: readonly StepCounts[],
  stepMs: number,
  fromMs: number,
  toMs: number,
): StepCounts[] {
  const byT = new Map(counts.map((c) => [c.tMs, c]));
  const start = Math.floor(fromMs / stepMs) * stepMs;
  const out: StepCounts[] = [];
  for (let t = start; t < toMs; t += stepMs) out.push(byT.get(t) ?? { tMs: t, good: 0, total: 0 });
  return out;
}

/** Cumulative sums, so any window's counts are one subtraction. */
function prefixSums(counts: readonly StepCounts[]): { good: Float64Array; total: Float64Array } {
  const good = new Float64Array(counts.length + 1);
  const total = new Float64Array(counts.length + 1);
  counts.forEach((c, i) => {
    good[i + 1] = good[i]! + c.good;
    total[i + 1] = total[i]! + c.total;
  });
  return { good, total };
}

/**
 * Burn rate over a rolling window ending at the end of each step (see
 * burnRate). Null where the window reaches before the first step (not fully
 * covered) or saw no events.
 */
export function rollingBurn(
  counts: readonly StepCounts[],
  stepMs: number,
  windowMs: number,
  objective: number,
): Array<number | null> {
  const n = Math.max(1, Math.round(windowMs / stepMs));
  const p = prefixSums(counts);
  return counts.map((_, i) => {
    if (i + 1 < n) return null;
    const good = p.good[i + 1]! - p.good[i + 1 - n]!;
    const total = p.total[i + 1]! - p.total[i + 1 - n]!;
    return burnRate(good, total, objective);
  });
}

/**
 * Error budget left (1 untouched, 0 spent, < 0 SLO broken) at the end of each
 * step, over the compliance window that step belongs to: `windowStart(endMs)`
 * gives its start (end − W for a rolling window, the period start for a
 * calendar one). Null where that start is before the first step, and 1 for a
 * window without events (as the SLO status says).
 */
export function budgetHistory(
  counts: readonly StepCounts[],
  stepMs: number,
  objective: number,
  windowStart: (endMs: number) => number,
): Array<number | null> {
  if (!counts.length) return [];
  const first = counts[0]!.tMs;
  const p = prefixSums(counts);
  return counts.map((c, i) => {
    const startMs = windowStart(c.tMs + stepMs);
    // Steps are whole: the window starts at the step boundary at or after its start.
    const j = Math.ceil((startMs - first) / stepMs);
    if (j < 0) return null;
    if (j > i) return 1;
    const good = p.good[i + 1]! - p.good[j]!;
    const total = p.total[i + 1]! - p.total[j]!;
    const b = burnRate(good, total, objective);
    return b === null ? 1 : Number((1 - b).toPrecision(12));
  });
}

/** The steps history charts use: each answer stays under ~1,000 steps for the range plus the lookback. */
export const HISTORY_STEPS_MS = [
  60_000,
  300_000,
  900_000,
  3_600_000,
  3 * 3_600_000,
  6 * 3_600_000,
  86_400_000,
] as const;

export function historyStepMs(rangeMs: number, lookbackMs: number): number {
  return HISTORY_STEPS_MS.find((s) => (rangeMs + lookbackMs) / s <= 1000) ?? 86_400_000;
}

/** How long the budget left lasts at a burn rate (null when not burning or already spent). */
export function budgetExhaustionMs(
  budget: number | null,
  rate: number | null,
  sloWindowMs: number,
): number | null {
  if (budget === null || rate === null || !(rate > 0) || budget <= 0) return null;
  return (budget * sloWindowMs) / rate;
}
