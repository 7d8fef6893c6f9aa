/**
 * Scratch buffers for the tests (one set per thread; detection is
 * synchronous, so detectors take turns). Slots: 0 tail threshold,
 * 1 before/window values, 2 after values, 3 times, 4-5 sorted copies,
 * 6-7 detrended values, 8-10 localisation sums, 11 medians, 12 shifted values.
 */
const SCRATCH: Float64Array[] = [];

export function scratch(slot: number, n: number): Float64Array {
  let b = SCRATCH[slot];
  if (!b || b.length < n) b = SCRATCH[slot] = new Float64Array(Math.max(n, 512));
  return b.subarray(0, n);
}

/** Median of a, by a sorted copy in scratch slot 11. */
export function medianOf(a: Float64Array): number {
  const n = a.length;
  if (n === 0) return NaN;
  const s = scratch(11, n);
  s.set(a);
  s.sort();
  const h = n >> 1;
  return n % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
}
