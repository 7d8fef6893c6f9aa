/**
 * How a latency, a latency change and a burn rate read: the one rule the
 * server (alert titles, webhook text) and the web UI both use, so a number a
 * person reads in a page-out is written exactly as on the page it links to.
 */

/** Human text for a latency in milliseconds: 850 µs, 41.6 ms, 2.2 s, 3.5 min. */
export function formatLatencyMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  // Rounded to the 3 digits shown before the unit is chosen: 999.7 ms reads 1.00 s, 9.9996 ms 10.0 ms.
  ms = Number(ms.toPrecision(3));
  const abs = Math.abs(ms);
  if (abs === 0) return '0';
  if (abs < 1) return `${trim(ms * 1000)} µs`;
  if (abs < 1000) return `${trim(ms)} ms`;
  if (abs < 60_000) return `${trim(ms / 1000)} s`;
  if (abs < 3_600_000) return `${trim(ms / 60_000)} min`;
  return `${trim(ms / 3_600_000)} h`;
}

function trim(v: number): string {
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
}

/** "×710", "×1.9", "×0.5": how many times slower. */
export function formatRatio(r: number): string {
  if (!Number.isFinite(r) || r <= 0) return '×?';
  if (r >= 100) return `×${Math.round(r)}`;
  if (r >= 10) return `×${r.toFixed(0)}`;
  return `×${r.toFixed(1)}`;
}

/**
 * "3.1 ms → 2.2 s, ×710": one quantile's change with that quantile's own
 * ratio (the server's, when given; else after / before).
 */
export function formatChange(beforeMs: number, afterMs: number, ratio?: number | null): string {
  const r = ratio ?? (beforeMs > 0 ? afterMs / beforeMs : NaN);
  return `${formatLatencyMs(beforeMs)} → ${formatLatencyMs(afterMs)}, ${formatRatio(r)}`;
}

/** A burn rate: 14.4×, 2.50×, 120×. */
export function formatBurn(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return v >= 100 ? `${v.toFixed(0)}×` : v >= 10 ? `${v.toFixed(1)}×` : `${v.toFixed(2)}×`;
}
