/** Display helpers for SLO lists. Pure. */
import type { Slo } from '@onset/contract';

/** SLOs with the least budget first; unknown budgets last. */
export function sortSlosByBudget<T extends Pick<Slo, 'status' | 'name'>>(slos: readonly T[]): T[] {
  const key = (s: T) => s.status?.budget_remaining ?? Infinity;
  return [...slos].sort((a, b) => key(a) - key(b) || a.name.localeCompare(b.name));
}

/**
 * The overview's "SLOs burning" rows: an SLO whose alert is open, burning its hour faster than it
 * can afford, or with under half its budget left; least budget first. At most `limit` rows, but
 * never one with an open alert left out (a paging SLO is pinned whatever else burns): those come
 * first. `more` counts the burning SLOs not shown.
 */
export function burningSlos<T extends Pick<Slo, 'status' | 'name'>>(
  slos: readonly T[],
  limit: number,
): { shown: T[]; more: number } {
  const burning = sortSlosByBudget(slos).filter(
    (s) =>
      s.status?.alert ||
      (s.status?.burn_rates?.['1h'] ?? 0) > 1 ||
      (s.status?.budget_remaining ?? 1) < 0.5,
  );
  const alerting = burning.filter((s) => s.status?.alert);
  const rest = burning.filter((s) => !s.status?.alert);
  const shown = [...alerting, ...rest.slice(0, Math.max(0, limit - alerting.length))];
  return { shown, more: burning.length - shown.length };
}

/** The burn rate at which the SLO's alert on this long window fires, as the server evaluates it (status.tiers). */
export function tierFactor(slo: Pick<Slo, 'status'>, window: string): number | undefined {
  return slo.status?.tiers?.find((t) => t.long === window && t.enabled !== false)?.factor;
}
