import { Histogram } from '@onset/core';

/**
 * An OTLP histogram point in its own buckets, kept until the counts are
 * placed: cumulative streams are differenced here, bucket by bucket, so the
 * placement of a delta never depends on how earlier points were placed.
 */
export interface NativeHistogram {
  /** `explicit:<bounds>` or `exponential:<scale>`: points of one stream are differenced only within one layout. */
  layout: string;
  kind: 'explicit' | 'exponential';
  /** Explicit: the bounds. Exponential: empty. */
  bounds: number[];
  /** Exponential scale (0 for explicit). */
  scale: number;
  /** Populated buckets: explicit bucket number, or exponential bucket index (offset + k); ZERO_BUCKET for the zero bucket. */
  idx: number[];
  cnt: number[];
  /** In the metric's unit; NaN when the sender left it out. */
  sum: number;
  min: number | undefined;
  max: number | undefined;
}

export const ZERO_BUCKET = -2_147_483_648;

/** Most slices one bucket's counts are spread over (placement cost stays O(buckets)). */
const SLICES = 32;

/** `cur - prev` bucket by bucket, or null when the stream was reset (a count went down). */
export function subtractNative(
  cur: NativeHistogram,
  prev: { idx: number[]; cnt: number[]; sum: number; scale: number },
): NativeHistogram | null {
  const prevCounts = new Map<number, number>();
  // An exponential histogram may lower its scale as its range grows: merge the old buckets to the new scale.
  const shift = cur.kind === 'exponential' ? prev.scale - cur.scale : 0;
  if (shift < 0) return null;
  prev.idx.forEach((i, k) => {
    const j = i === ZERO_BUCKET ? i : i >> shift;
    prevCounts.set(j, (prevCounts.get(j) ?? 0) + prev.cnt[k]!);
  });
  const idx: number[] = [];
  const cnt: number[] = [];
  cur.idx.forEach((i, k) => {
    const d = cur.cnt[k]! - (prevCounts.get(i) ?? 0);
    prevCounts.delete(i);
    if (d < 0) return void idx.push(NaN);
    if (d > 0) {
      idx.push(i);
      cnt.push(d);
    }
  });
  if (idx.some(Number.isNaN) || [...prevCounts.values()].some((c) => c > 0)) return null;
  return { ...cur, idx, cnt, sum: cur.sum - prev.sum };
}

/**
 * Place the counts as Onset observations (µs). Each bucket is first clipped to
 * the point's min and max (so the first and last populated buckets shrink to
 * the observed range); its counts are then spread evenly across it (linearly
 * for explicit buckets, geometrically for exponential ones), and, for explicit
 * buckets, skewed toward either end of every bucket by the same fraction so
 * the placed values add up to the point's sum.
 */
export function placeNative(p: NativeHistogram, toUs: number): Histogram {
  const h = new Histogram();
  const ranges: Array<{ lo: number; hi: number; c: number; zero: boolean }> = [];
  const base = Math.pow(2, Math.pow(2, -p.scale));
  p.idx.forEach((i, k) => {
    const c = p.cnt[k]!;
    if (c <= 0) return;
    if (i === ZERO_BUCKET) return void ranges.push({ lo: 0, hi: 0, c, zero: true });
    let lo: number, hi: number;
    if (p.kind === 'explicit') {
      lo = i === 0 ? Math.min(0, p.bounds[0] ?? 0) : p.bounds[i - 1]!;
      hi = i < p.bounds.length ? p.bounds[i]! : (p.max ?? (lo > 0 ? lo * 2 : 1));
      if (i === 0 && p.min === undefined) lo = Math.max(0, Math.min(lo, hi));
    } else {
      lo = Math.pow(base, i);
      hi = Math.pow(base, i + 1);
    }
    if (p.min !== undefined && Number.isFinite(p.min)) lo = Math.min(Math.max(lo, p.min), hi);
    if (p.max !== undefined && Number.isFinite(p.max)) hi = Math.max(Math.min(hi, p.max), lo);
    ranges.push({ lo, hi, c, zero: false });
  });
  // Skew toward the sum: a fraction f ∈ (-1, 1) of every bucket's room above (f > 0) or below its middle.
  let skew = 0;
  if (p.kind === 'explicit' && Number.isFinite(p.sum)) {
    let middle = 0;
    let room = 0;
    for (const r of ranges) {
      middle += (r.c * (r.lo + r.hi)) / 2;
      room += (r.c * (r.hi - r.lo)) / 2;
    }
    if (room > 0) skew = Math.max(-0.96, Math.min(0.96, (p.sum - middle) / room));
  }
  // Mean position t of u^g on [0, 1] is 1/(g+1): choose g so it sits at (1 + skew) / 2.
  const gamma = 2 / (1 + skew) - 1;
  for (const r of ranges) {
    if (r.zero || r.hi <= r.lo) {
      h.record(r.lo * toUs, r.c);
      continue;
    }
    const slices = Math.min(r.c, SLICES);
    for (let j = 0; j < slices; j++) {
      const n = Math.floor((r.c * (j + 1)) / slices) - Math.floor((r.c * j) / slices);
      const u = Math.pow((j + 0.5) / slices, gamma);
      const v = p.kind === 'explicit' ? r.lo + (r.hi - r.lo) * u : r.lo * Math.pow(r.hi / r.lo, u);
      h.record(v * toUs, n);
    }
  }
  if (Number.isFinite(p.sum) && p.sum >= 0) h.sum = p.sum * toUs;
  return h;
}
