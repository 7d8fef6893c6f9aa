/** Human text for a latency in milliseconds: 850 µs, 41.6 ms, 2.2 s, 3.5 min. */
export function formatLatencyMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
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
