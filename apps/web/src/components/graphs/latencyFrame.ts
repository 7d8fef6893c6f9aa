/**
 * The data of one latency chart, columnar (what uPlot draws): x in seconds,
 * one values column per line (ms, null where there is no data so lines break
 * across gaps instead of inventing a straight segment).
 */
export type LineColor = 'p50' | 'p90' | 'p99' | 'p999' | 'client' | 'server' | 'gap' | `c${number}`;

export interface Line {
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
  inputs: ReadonlyArray<{ key: string; label: string; color: LineColor; points: ReadonlyArray<TimedValue>; dash?: boolean; width?: number }>,
  stepMs: number,
): LatencyFrame {
  const times = new Set<number>();
  for (const inp of inputs) for (const p of inp.points) times.add(p.tMs);
  const sorted = withGapBreaks([...times].sort((a, b) => a - b), stepMs);
  const index = new Map<number, number>();
  sorted.forEach((t, i) => index.set(t, i));
  const lines: Line[] = inputs.map((inp) => {
    const values: Array<number | null> = new Array(sorted.length).fill(null);
    for (const p of inp.points) values[index.get(p.tMs)!] = p.v;
    return { key: inp.key, label: inp.label, color: inp.color, values, dash: inp.dash, width: inp.width };
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
