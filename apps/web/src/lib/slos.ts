/** Display helpers for SLO lists. Pure. */
import type { Slo } from '@onset/contract';

/** SLOs with the least budget first; unknown budgets last. */
export function sortSlosByBudget<T extends Pick<Slo, 'status' | 'name'>>(slos: readonly T[]): T[] {
  const key = (s: T) => s.status?.budget_remaining ?? Infinity;
  return [...slos].sort((a, b) => key(a) - key(b) || a.name.localeCompare(b.name));
}

/** The burn rate at which the SLO's alert on this long window fires, as the server evaluates it (status.tiers). */
export function tierFactor(slo: Pick<Slo, 'status'>, window: string): number | undefined {
  return slo.status?.tiers?.find((t) => t.long === window && t.enabled !== false)?.factor;
}
