/**
 * The data of one latency chart, columnar (what uPlot draws): x in seconds,
 * one values column per line (ms, null where there is no data so lines break
 * across gaps instead of inventing a straight segment).
 */
export type LineColor = 'p50' | 'p90' | 'p99' | 'p999' | 'client' | 'server' | 'gap' | `c${number}`;

interface Line {
  key: string;
  label: string;
  color: LineColor;
  values: Array<number | null>;
  dash?: boolean;
  width?: number;
}

export interface LatencyFrame {
  /** Seconds since epoch, ascending. */
  x: number[];
  lines: Line[];
  /** Observations per step (drawn as faint bars on a second axis). */
  count?: Array<number | null>;
  stepMs: number;
}

export interface TimedValue {
  tMs: number;
  v: number | null;
}

/**
 * Align several per-step inputs on one time axis (union of their steps),
 * inserting one null after any hole longer than a step so lines break there.
 */
export function alignLines(
  inputs: ReadonlyArray<{
    key: string;
    label: string;
    color: LineColor;
    points: ReadonlyArray<TimedValue>;
    dash?: boolean;
    width?: number;
  }>,
  stepMs: number,
): LatencyFrame {
  const times = new Set<number>();
  for (const inp of inputs) for (const p of inp.points) times.add(p.tMs);
  const sorted = withGapBreaks(
    [...times].sort((a, b) => a - b),
    stepMs,
  );
  const index = new Map<number, number>();
  sorted.forEach((t, i) => index.set(t, i));
  const lines: Line[] = inputs.map((inp) => {
    const values: Array<number | null> = new Array(sorted.length).fill(null);
    for (const p of inp.points) values[index.get(p.tMs)!] = p.v;
    return {
      key: inp.key,
      label: inp.label,
      color: inp.color,
      values,
      dash: inp.dash,
      width: inp.width,
    };
  });
  return { x: sorted.map((t) => t / 1000), lines, stepMs };
}

/** Times with an extra instant inserted one step after each hole (values there stay null). */
export function withGapBreaks(sortedMs: readonly number[], stepMs: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < sortedMs.length; i++) {
    const t = sortedMs[i]!;
    out.push(t);
    const next = sortedMs[i + 1];
    if (next !== undefined && stepMs > 0 && next - t > stepMs * 1.5) out.push(t + stepMs);
  }
  return out;
}

/** "0.5" → "p50", "0.99" → "p99", "0.999" → "p99.9". */
export function quantileLabel(q: string | number): string {
  const n = Number(q) * 100;
  return `p${Number(n.toFixed(3))}`;
}

export function quantileColor(q: string | number): LineColor {
  const n = Number(q);
  if (n >= 0.999) return 'p999';
  if (n >= 0.99) return 'p99';
  if (n >= 0.9) return 'p90';
  return 'p50';
}

/**
 * Thin a long frame to at most 2 points per bucket, `buckets` buckets, keeping
 * each line's minimum and maximum in their time order (and the count's
 * maximum), so spikes and steps survive at pixel resolution. Times shift
 * within a bucket; lines stay aligned on one x axis. A bucket with no value
 * stays null, so gaps longer than a bucket still break the lines.
 * Short frames come back unchanged.
 */
export function thinFrame(
  frame: LatencyFrame,
  buckets = 2000,
): LatencyFrame & { thinned: boolean } {
  const n = frame.x.length;
  if (n <= 2 * buckets) return { ...frame, thinned: false };
  const size = Math.ceil(n / buckets);
  const m = Math.ceil(n / size);
  const x = new Array<number>(2 * m);
  const lines = frame.lines.map((l) => ({ ...l, values: new Array<number | null>(2 * m) }));
  const count = frame.count ? new Array<number | null>(2 * m) : undefined;
  for (let j = 0; j < m; j++) {
    const i0 = j * size;
    const i1 = Math.min(n, i0 + size);
    x[2 * j] = frame.x[i0]!;
    x[2 * j + 1] = frame.x[Math.min(i1 - 1, i0 + (size >> 1))]!;
    for (let k = 0; k < frame.lines.length; k++) {
      const v = frame.lines[k]!.values;
      let lo = Infinity;
      let hi = -Infinity;
      let loAt = -1;
      let hiAt = -1;
      for (let i = i0; i < i1; i++) {
        const y = v[i];
        if (y === null || y === undefined) continue;
        if (y < lo) {
          lo = y;
          loAt = i;
        }
        if (y > hi) {
          hi = y;
          hiAt = i;
        }
      }
      const out = lines[k]!.values;
      if (loAt < 0) {
        out[2 * j] = null;
        out[2 * j + 1] = null;
      } else if (loAt <= hiAt) {
        out[2 * j] = lo;
        out[2 * j + 1] = hi;
      } else {
        out[2 * j] = hi;
        out[2 * j + 1] = lo;
      }
    }
    if (count && frame.count) {
      let c: number | null = null;
      for (let i = i0; i < i1; i++) {
        const y = frame.count[i];
        if (y !== null && y !== undefined && (c === null || y > c)) c = y;
      }
      count[2 * j] = c;
      count[2 * j + 1] = c;
    }
  }
  return { x, lines, count, stepMs: frame.stepMs, thinned: true };
}
