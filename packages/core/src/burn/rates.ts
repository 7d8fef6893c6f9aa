/**
 * Error-budget burn maths for latency SLOs (The Site Reliability Workbook,
 * chapter 5 "Alerting on SLOs", approach 6: multiwindow, multi-burn-rate).
 *
 * An SLO says: at least `objective` of events are good (here: latency at or
 * under a threshold) over a window W. The error budget is the allowed bad
 * fraction, 1 - objective. The burn rate over some window is how fast that
 * budget is being spent relative to "exactly on budget":
 *
 *     burnRate = (bad / total) / (1 - objective)
 *
 * Burn rate 1 spends the whole budget in exactly W; burn rate k spends it in
 * W / k. An alert on burn rate b over a long window L fires once b·L/W of the
 * budget is gone, so the Workbook picks b from the budget fraction it wants to
 * tolerate before notifying: 2% in 1 h, 5% in 6 h (page), 10% in 1 d and
 * 10% in 3 d (ticket). For W = 30 d that gives 14.4, 6, 3 and 1; for other
 * windows the same budget fractions give the factors scaled to W.
 */
import type { Severity } from '@onset/contract';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** The windows the recipe looks at, by their public names (api.md burn_rates keys, plus 2h). */
export const BURN_WINDOWS = {
  '5m': 5 * MINUTE_MS,
  '30m': 30 * MINUTE_MS,
  '1h': HOUR_MS,
  '2h': 2 * HOUR_MS,
  '6h': 6 * HOUR_MS,
  '1d': DAY_MS,
  '3d': 3 * DAY_MS,
} as const;
export type BurnWindow = keyof typeof BURN_WINDOWS;
export const BURN_WINDOW_NAMES = Object.keys(BURN_WINDOWS) as BurnWindow[];

export type TierName = 'page_1h' | 'page_6h' | 'ticket_1d' | 'ticket_3d';

export interface BurnTier {
  name: TierName;
  severity: Severity;
  long: BurnWindow;
  short: BurnWindow;
  /** Share of the whole error budget spent over `long` before this tier notifies. */
  budgetFraction: number;
}

/** The Workbook's recommended parameters (Table 5-8), as budget fractions. */
export const BURN_TIERS: readonly BurnTier[] = [
  { name: 'page_1h', severity: 'page', long: '1h', short: '5m', budgetFraction: 0.02 },
  { name: 'page_6h', severity: 'page', long: '6h', short: '30m', budgetFraction: 0.05 },
  { name: 'ticket_1d', severity: 'ticket', long: '1d', short: '2h', budgetFraction: 0.1 },
  { name: 'ticket_3d', severity: 'ticket', long: '3d', short: '6h', budgetFraction: 0.1 },
];
export const TIER_NAMES = BURN_TIERS.map((t) => t.name);

/** Round away float noise (0.02 * 720 = 14.399999999999999). */
function clean(x: number): number {
  return Number(x.toPrecision(12));
}

/** Fraction of events that were bad; null without events. */
export function errorRatio(good: number, total: number): number | null {
  if (!(total > 0)) return null;
  return (total - good) / total;
}

/** Burn rate over a window with `good` of `total` events good; null without events. */
export function burnRate(good: number, total: number, objective: number): number | null {
  const e = errorRatio(good, total);
  if (e === null) return null;
  return clean(e / (1 - objective));
}

/** SLI: share of good events; null without events. */
export function sli(good: number, total: number): number | null {
  return total > 0 ? good / total : null;
}

/**
 * Share of the window's error budget still unspent: 1 - bad / allowed bad,
 * where allowed bad = (1 - objective) × events. 1 with no events; negative
 * once the SLO is broken.
 */
export function budgetRemaining(good: number, total: number, objective: number): number {
  const b = burnRate(good, total, objective);
  return b === null ? 1 : clean(1 - b);
}

/** How long a constant burn rate takes to spend the whole budget of an SLO window. */
export function timeToExhaustion(rate: number, sloWindowMs: number): number {
  return rate > 0 ? sloWindowMs / rate : Infinity;
}

/** Share of the budget a constant burn rate spends over `spanMs`. */
export function budgetConsumed(rate: number, spanMs: number, sloWindowMs: number): number {
  return clean((rate * spanMs) / sloWindowMs);
}

/**
 * Burn-rate factor of a tier for an SLO window: the rate that spends the
 * tier's budget fraction in its long window (14.4 for page_1h and 30 d).
 * Never below 1: a slower burn would not exhaust the budget within the window,
 * so it is not worth a notification.
 */
export function tierFactor(tier: BurnTier, sloWindowMs: number): number {
  return Math.max(1, clean((tier.budgetFraction * sloWindowMs) / BURN_WINDOWS[tier.long]));
}

/** A tier only makes sense when its long window fits inside the SLO window. */
export function tierApplies(tier: BurnTier, sloWindowMs: number): boolean {
  return BURN_WINDOWS[tier.long] <= sloWindowMs;
}

/**
 * Time until a tier notifies for a constant error ratio, from the Workbook:
 * detection time = ((1 - SLO) / error ratio) × alerting window × burn rate.
 */
export function detectionTime(
  errorRatioValue: number,
  objective: number,
  longWindowMs: number,
  factor: number,
): number {
  if (!(errorRatioValue > 0)) return Infinity;
  const t = ((1 - objective) / errorRatioValue) * longWindowMs * factor;
  return t > longWindowMs ? Infinity : t;
}

export interface Counts {
  good: number;
  total: number;
}

export interface LowTrafficGuard {
  /** A window needs at least this many events to count as burning. */
  minEvents: number;
  /** …and at least this many bad ones, so one slow event never pages. */
  minBadEvents: number;
}

export const DEFAULT_GUARD: LowTrafficGuard = { minEvents: 20, minBadEvents: 2 };

export interface TierResult {
  name: TierName;
  severity: Severity;
  long: BurnWindow;
  short: BurnWindow;
  enabled: boolean;
  factor: number;
  burn_long: number | null;
  burn_short: number | null;
  events_long: number;
  events_short: number;
  firing: boolean;
}

function burning(c: Counts, objective: number, factor: number, guard: LowTrafficGuard): boolean {
  if (c.total < guard.minEvents || c.total - c.good < guard.minBadEvents) return false;
  const b = burnRate(c.good, c.total, objective);
  return b !== null && b >= factor;
}

/**
 * Evaluate every tier: a tier fires when both its long and its short window
 * burn at or above its factor (the short window makes the alert reset soon
 * after the burn stops), each window having enough events.
 */
export function evaluateTiers(
  windows: Record<BurnWindow, Counts>,
  opts: {
    objective: number;
    sloWindowMs: number;
    enabled?: Partial<Record<TierName, boolean>>;
    guard?: LowTrafficGuard;
  },
): TierResult[] {
  const guard = opts.guard ?? DEFAULT_GUARD;
  return BURN_TIERS.map((tier) => {
    const factor = tierFactor(tier, opts.sloWindowMs);
    const enabled = opts.enabled?.[tier.name] !== false && tierApplies(tier, opts.sloWindowMs);
    const l = windows[tier.long];
    const s = windows[tier.short];
    return {
      name: tier.name,
      severity: tier.severity,
      long: tier.long,
      short: tier.short,
      enabled,
      factor,
      burn_long: burnRate(l.good, l.total, opts.objective),
      burn_short: burnRate(s.good, s.total, opts.objective),
      events_long: l.total,
      events_short: s.total,
      firing:
        enabled &&
        burning(l, opts.objective, factor, guard) &&
        burning(s, opts.objective, factor, guard),
    };
  });
}

/** The most severe firing tier per severity (the one with the highest long-window burn). */
export function firingBySeverity(results: TierResult[]): Map<Severity, TierResult> {
  const out = new Map<Severity, TierResult>();
  for (const r of results) {
    if (!r.firing) continue;
    const cur = out.get(r.severity);
    if (!cur || (r.burn_long ?? 0) > (cur.burn_long ?? 0)) out.set(r.severity, r);
  }
  return out;
}
