import { formatChange, formatLatencyMs, formatRatio } from '@onset/core';

/** The one formatting rule for latencies and changes lives in core (server and web share it). */
export { formatChange, formatLatencyMs, formatRatio };

/** "+40.0 ms" for an additive change (the hyper/Nagle incident reads best this way). */
export function formatDelta(beforeMs: number, afterMs: number): string {
  const d = afterMs - beforeMs;
  return `${d >= 0 ? '+' : '−'}${formatLatencyMs(Math.abs(d))}`;
}

export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return '–';
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(0)}k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

export function formatPercent(x: number | null | undefined, digits = 1): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  return `${(x * 100).toFixed(digits)}%`;
}

/** Only http(s) URLs become links; anything else (javascript:, data:) stays text. */
export function safeHttpUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** Where a series sits: "checkout → urlite" for an edge, else the service. */
export function edgeLabel(x: { service: string; peer?: string | null; view?: string }): string {
  return x.peer ? `${x.service} → ${x.peer}` : x.service;
}
