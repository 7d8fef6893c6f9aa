/** A tiny p99 line for list rows; its accessible name states what it shows in words. */
import { formatLatencyMs } from '../lib/format.ts';

export function Sparkline({
  values,
  width = 96,
  height = 24,
  label,
}: {
  values: ReadonlyArray<number | null>;
  width?: number;
  height?: number;
  /** What the line is of, e.g. "p99 over the last hour". */
  label: string;
}) {
  const present = values.filter((v): v is number => v !== null && v > 0);
  if (!present.length)
    return (
      <span className="sparkline-empty muted small" role="img" aria-label={`${label}: no calls`}>
        no calls
      </span>
    );
  // Log scale: a ×40 step stays visible next to normal jitter.
  const logs = present.map(Math.log);
  const lo = Math.min(...logs);
  const hi = Math.max(...logs);
  const span = hi - lo || 1;
  const n = values.length;
  const x = (i: number) => (n <= 1 ? width / 2 : (i / (n - 1)) * (width - 2) + 1);
  const y = (v: number) => height - 2 - ((Math.log(v) - lo) / span) * (height - 4);
  let d = '';
  let pen = false;
  values.forEach((v, i) => {
    if (v === null || v <= 0) {
      pen = false;
      return;
    }
    d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    pen = true;
  });
  const last = present[present.length - 1]!;
  const text = `${label}: from ${formatLatencyMs(Math.min(...present))} to ${formatLatencyMs(Math.max(...present))}, latest ${formatLatencyMs(last)}`;
  return (
    <svg
      className="sparkline"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={text}
    >
      <title>{text}</title>
      <path d={d} fill="none" stroke="currentColor" strokeWidth="1.5" />
    </svg>
  );
}
