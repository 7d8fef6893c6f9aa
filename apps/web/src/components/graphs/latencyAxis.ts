/**
 * Latency axes: log scale by default (a 3 ms → 2 s step and a 1 ms → 40 ms
 * step are both obvious), human units via formatLatencyMs. Pure maths, no uPlot.
 */
/** Smallest and largest positive finite value across columns (log scales cannot show ≤ 0). */
export function positiveExtent(
  columns: ReadonlyArray<ReadonlyArray<number | null | undefined>>,
): [number, number] | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const col of columns)
    for (let i = 0; i < col.length; i++) {
      const v = col[i];
      if (v !== null && v !== undefined && v > 0 && Number.isFinite(v)) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
  return lo <= hi ? [lo, hi] : null;
}

/**
 * A log range around the data with a fifth of a decade of room on each side
 * (lines never sit on the frame), at least one decade tall.
 */
export function logRange(minMs: number, maxMs: number): [number, number] {
  if (!(minMs > 0) || !(maxMs > 0)) return [0.1, 1000];
  let lo = minMs / 1.6;
  let hi = maxMs * 1.6;
  if (hi / lo < 10) {
    const mid = Math.sqrt(lo * hi);
    lo = mid / Math.sqrt(10);
    hi = mid * Math.sqrt(10);
  }
  // Snap to a nearby decade so the axis gets a labelled tick at its ends.
  const loDecade = Math.pow(10, Math.floor(Math.log10(lo)));
  if (lo / loDecade < 2) lo = loDecade;
  const hiDecade = Math.pow(10, Math.ceil(Math.log10(hi)));
  if (hiDecade / hi < 2) hi = hiDecade;
  return [Number(lo.toPrecision(3)), Number(hi.toPrecision(3))];
}

/** Tick values on a log axis: every decade; with few decades also ×2 and ×5. */
export function logTicks(loMs: number, hiMs: number): number[] {
  if (!(loMs > 0) || !(hiMs > loMs)) return [];
  const first = Math.floor(Math.log10(loMs) + 1e-9);
  const last = Math.ceil(Math.log10(hiMs) + 1e-9);
  const decades = Math.log10(hiMs / loMs);
  const mults = decades <= 1.2 ? [1, 1.5, 2, 3, 5, 7] : decades <= 2.5 ? [1, 2, 5] : [1];
  const every = decades > 8 ? 2 : 1;
  const out: number[] = [];
  for (let e = first; e <= last; e++) {
    if (mults.length === 1 && (e - first) % every !== 0) continue;
    for (const m of mults) {
      const v = Number((m * Math.pow(10, e)).toPrecision(3));
      if (v >= loMs * (1 - 1e-9) && v <= hiMs * (1 + 1e-9)) out.push(v);
    }
  }
  return out;
}

/** A linear range from 0 to a round value above the data. */
export function linearRange(maxMs: number): [number, number] {
  if (!(maxMs > 0)) return [0, 1];
  const mag = Math.pow(10, Math.floor(Math.log10(maxMs)));
  const steps = [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 12];
  const target = maxMs * 1.08;
  for (const s of steps) if (s * mag >= target) return [0, Number((s * mag).toPrecision(6))];
  return [0, 15 * mag];
}

/**
 * Tick labels: round values with no trailing zeros ("1 ms", "100 µs", "2.5 s", "100 s").
 * uPlot passes null for the ticks a short log axis leaves unlabelled: those stay blank
 * (they once read "0 µs").
 */
export function latencyTickLabels(values: ReadonlyArray<number | null | undefined>): string[] {
  return values.map((v) =>
    v === null || v === undefined || !Number.isFinite(v) ? '' : formatTick(v),
  );
}

function formatTick(ms: number): string {
  if (ms === 0) return '0';
  const a = Math.abs(ms);
  const n = (v: number) => String(Number(v.toPrecision(3)));
  if (a < 1) return `${n(ms * 1000)} µs`;
  if (a < 1000) return `${n(ms)} ms`;
  if (a < 600_000) return `${n(ms / 1000)} s`;
  if (a < 7_200_000) return `${n(ms / 60_000)} min`;
  return `${n(ms / 3_600_000)} h`;
}
