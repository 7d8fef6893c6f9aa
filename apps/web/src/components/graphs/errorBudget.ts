/**
 * SLO maths for the charts, from per-step latency histograms: good/bad
 * counts against the threshold, burn rate over rolling windows, and the
 * error budget left over the SLO window. Bucket resolution (≤ 2%), the same
 * histograms the server evaluates. Pure; unit-tested.
 */
import { bucketValue, ZERO_BUCKET } from '@onset/core';
import type { HeatmapPoint, Slo } from '../../api/types.ts';

export interface StepCounts {
  tMs: number;
  total: number;
  bad: number;
}

/** Multiwindow, multi-burn-rate alerting (api.md): page at 14.4× and 6×, ticket at 3× and 1×. */
export const BURN_TIERS: ReadonlyArray<{
  long: string;
  short: string;
  factor: number;
  severity: 'page' | 'ticket';
  longMs: number;
  shortMs: number;
}> = [
  { long: '1h', short: '5m', factor: 14.4, severity: 'page', longMs: 3_600_000, shortMs: 300_000 },
  {
    long: '6h',
    short: '30m',
    factor: 6,
    severity: 'page',
    longMs: 6 * 3_600_000,
    shortMs: 1_800_000,
  },
  {
    long: '1d',
    short: '2h',
    factor: 3,
    severity: 'ticket',
    longMs: 86_400_000,
    shortMs: 2 * 3_600_000,
  },
  {
    long: '3d',
    short: '6h',
    factor: 1,
    severity: 'ticket',
    longMs: 3 * 86_400_000,
    shortMs: 6 * 3_600_000,
  },
];

/** Per step: all observations and those slower than the threshold. */
export function countsFromHistograms(
  points: readonly HeatmapPoint[],
  thresholdMs: number,
): StepCounts[] {
  const thresholdUs = thresholdMs * 1000;
  return points.map((p) => {
    let bad = 0;
    let total = 0;
    for (let k = 0; k < p.idx.length; k++) {
      const c = p.cnt[k]!;
      total += c;
      const i = p.idx[k]!;
      if (i !== ZERO_BUCKET && bucketValue(i) > thresholdUs) bad += c;
    }
    return { tMs: Date.parse(p.t), total, bad };
  });
}

/** Fill missing steps with zero counts so rolling windows measure time, not rows. */
export function denseCounts(
  counts: readonly StepCounts[],
  stepMs: number,
  fromMs: number,
  toMs: number,
): StepCounts[] {
  const byT = new Map(counts.map((c) => [c.tMs, c]));
  const start = Math.floor(fromMs / stepMs) * stepMs;
  const out: StepCounts[] = [];
  for (let t = start; t < toMs; t += stepMs) out.push(byT.get(t) ?? { tMs: t, total: 0, bad: 0 });
  return out;
}

/**
 * Burn rate over a rolling window ending at each step: (bad/total) / (1 − objective).
 * 1 means the budget lasts exactly the SLO window. Null where the window is
 * not yet fully covered or saw no traffic.
 */
export function rollingBurn(
  counts: readonly StepCounts[],
  stepMs: number,
  windowMs: number,
  objective: number,
): Array<number | null> {
  const n = Math.max(1, Math.round(windowMs / stepMs));
  const allowed = 1 - objective;
  const out: Array<number | null> = [];
  let bad = 0;
  let total = 0;
  for (let i = 0; i < counts.length; i++) {
    bad += counts[i]!.bad;
    total += counts[i]!.total;
    if (i >= n) {
      bad -= counts[i - n]!.bad;
      total -= counts[i - n]!.total;
    }
    out.push(i + 1 < n || total === 0 || !(allowed > 0) ? null : bad / total / allowed);
  }
  return out;
}

/** Error budget left (1 = untouched, 0 = spent, < 0 = SLO broken) over the rolling SLO window ending at each step. */
export function budgetRemaining(
  counts: readonly StepCounts[],
  stepMs: number,
  windowMs: number,
  objective: number,
): Array<number | null> {
  return rollingBurn(counts, stepMs, windowMs, objective).map((b) => (b === null ? null : 1 - b));
}

/** SLOs with the least budget first; unknown budgets last. */
export function sortSlosByBudget<T extends Pick<Slo, 'status' | 'name'>>(slos: readonly T[]): T[] {
  const key = (s: T) => s.status?.budget_remaining ?? Infinity;
  return [...slos].sort((a, b) => key(a) - key(b) || a.name.localeCompare(b.name));
}

/** A step that keeps a burn chart under ~1,000 points for the range plus the longest window. */
export function burnStepMs(rangeMs: number, lookbackMs: number): number {
  const steps = [60_000, 300_000, 900_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 86_400_000];
  return steps.find((s) => (rangeMs + lookbackMs) / s <= 1000) ?? 86_400_000;
}

/** How long until the budget is gone at the current burn (null when not burning). */
export function timeToExhaustionMs(
  budget: number | null,
  burn: number | null,
  windowMs: number,
): number | null {
  if (budget === null || burn === null || !(burn > 0) || budget <= 0) return null;
  return (budget * windowMs) / burn;
}
