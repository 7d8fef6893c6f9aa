import type { Severity } from '@onset/contract';

/** Latency growth (p50 or p99) at which a regression pages even without an SLO. */
export const REGRESSION_PAGE_RATIO = 10;

/**
 * Severity of a new regression, from its ratio and the SLOs it touches:
 * `page` when its p99 after the change exceeds the threshold of an SLO that
 * watches the series (it is spending that SLO's budget), or when latency grew
 * by REGRESSION_PAGE_RATIO× or more; `ticket` otherwise.
 */
export function regressionSeverity(
  r: { ratio_p50: number | null; ratio_p99: number | null; after_p99_ms: number | null },
  touchedThresholdsMs: number[],
): Severity {
  if (r.after_p99_ms !== null && touchedThresholdsMs.some((t) => r.after_p99_ms! > t))
    return 'page';
  if (Math.max(r.ratio_p50 ?? 0, r.ratio_p99 ?? 0) >= REGRESSION_PAGE_RATIO) return 'page';
  return 'ticket';
}
