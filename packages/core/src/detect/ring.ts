/**
 * The point ring: the last `cap` points with data (time, count, global
 * index, log p50 / p99 and their small-count corrections), the longer p50
 * history before it that the long scan reads, and the learnt spread of the
 * event distribution that corrects small counts. Points are addressed by
 * their valid index (the n-th point with data); the ring holds the last
 * `cap` of them.
 */
import { scratch } from './scratch.ts';
import { normalQuantile, orderStatisticZ } from './stats.ts';
import { round6, SPREAD_MEMORY } from './tuning.ts';
import type { MinutePoint } from './types.ts';

export const Z99 = normalQuantile(0.99);
const Z_CACHE = 4096;
const zCache: [Float64Array, Float64Array] = [
  new Float64Array(Z_CACHE + 1).fill(NaN),
  new Float64Array(Z_CACHE + 1).fill(NaN),
];
/** orderStatisticZ for p50 (which 0) or p99 (which 1), cached for common counts. */
export function zAt(which: number, count: number): number {
  const n = Math.max(1, Math.round(count));
  if (n > Z_CACHE) return orderStatisticZ(which ? 0.99 : 0.5, n);
  const cache = zCache[which]!;
  let z = cache[n]!;
  if (Number.isNaN(z)) z = cache[n] = orderStatisticZ(which ? 0.99 : 0.5, n);
  return z;
}

export class PointRing {
  /** Points held (beforePoints + maxAfterPoints + 4). */
  readonly cap: number;
  /** Points with data ever appended: the valid index of the next one. */
  valid = 0;
  readonly time: Float64Array;
  readonly count: Float64Array;
  /** Global index (points ever pushed, with or without data) of each point. */
  readonly index: Float64Array;
  /** log(value + floor) of p50 and p99, rounded to 1e-6 (read through `y()`, which corrects small counts). */
  readonly logValue: [Float64Array, Float64Array];
  /** Per point, the small-count correction per unit of spread: -Φ⁻¹ level of its p50, Φ⁻¹(0.99) - level of its p99. */
  readonly zShift: [Float64Array, Float64Array];
  /**
   * p50 history older than the ring, for the long scan (slot = valid index %
   * longCap): time in whole minutes and corrected log p50 in micro-units, as
   * 32-bit integers (half the memory of doubles; the scan needs no more).
   */
  readonly longCap: number;
  readonly longMinute: Int32Array;
  readonly longMicro: Int32Array;
  /** First valid index the long history holds (later than 0 after restoring a state that kept less of it). */
  longFrom = 0;
  /** Spread of the event distribution in log units (σ_u), from p99 - p50 against their order-statistic levels: decayed sums and the estimate. */
  spreadXZ = 0;
  spreadZZ = 0;
  sigmaU = 0;

  constructor(cap: number, longCap: number) {
    this.cap = cap;
    this.longCap = longCap;
    // One backing store for all nine arrays: each ArrayBuffer of its own is an
    // off-heap allocation the GC tracks, and a pass that builds 100,000
    // detectors spent a fifth of its time allocating them one by one.
    const f64 = 8 * cap;
    const buf = new ArrayBuffer(7 * f64 + 2 * 4 * longCap);
    const f = (k: number) => new Float64Array(buf, k * f64, cap);
    this.time = f(0);
    this.count = f(1);
    this.index = f(2);
    this.logValue = [f(3), f(4)];
    this.zShift = [f(5), f(6)];
    this.longMinute = new Int32Array(buf, 7 * f64, longCap);
    this.longMicro = new Int32Array(buf, 7 * f64 + 4 * longCap, longCap);
  }

  /**
   * Append a point with data (v50, v99: value + floor, both positive);
   * the ring's oldest point moves to the long p50 history. Returns its valid index.
   */
  append(t: number, c: number, g: number, v50: number, v99: number): number {
    const vi = this.valid++;
    const pos = vi % this.cap;
    if (vi >= this.cap && this.longCap > 0) {
      const lp = (vi - this.cap) % this.longCap;
      this.longMinute[lp] = Math.round(this.time[pos]! / 60_000);
      this.longMicro[lp] = Math.round(this.y(0, pos) * 1e6);
    }
    this.time[pos] = t;
    this.count[pos] = c;
    this.zShift[0][pos] = -zAt(0, c);
    this.zShift[1][pos] = Z99 - zAt(1, c);
    this.index[pos] = g;
    const l50 = round6(Math.log(v50));
    const l99 = round6(Math.log(v99));
    this.logValue[0][pos] = l50;
    this.logValue[1][pos] = l99;
    // Learn the distribution's spread from how far p99 sits above p50 at the
    // counts seen (see y()).
    const dz = zAt(1, c) - zAt(0, c);
    if (dz > 0) {
      const rhoS = 1 - 1 / SPREAD_MEMORY;
      this.spreadXZ = rhoS * this.spreadXZ + dz * Math.min(Math.max(l99 - l50, 0), 3 * dz);
      this.spreadZZ = rhoS * this.spreadZZ + dz * dz;
      this.sigmaU = this.spreadZZ > 1 ? Math.max(0, this.spreadXZ / this.spreadZZ) : 0;
    }
    return vi;
  }

  /**
   * The value the detector works on for ring position `pos`: log(q + floor),
   * corrected to the level it estimates. A minute's "p99" of n events is the
   * rank-ceil(0.99n) value: for small n it sits well below the true p99 (the
   * max of 5 events is near the 83rd percentile), so raw p99 dips whenever
   * traffic does (every night). Both quantiles are moved to the level they
   * estimate, σ·(Φ⁻¹(q) - Φ⁻¹(k/(n+1))), with σ the learnt spread.
   */
  y(mi: number, pos: number): number {
    return this.logValue[mi]![pos]! + this.sigmaU * this.zShift[mi]![pos]!;
  }

  /** Corrected values of valid indices [from, to] into scratch `slot`. */
  rangeY(mi: number, from: number, to: number, slot: number): Float64Array {
    const out = scratch(slot, Math.max(0, to - from + 1));
    for (let v = from; v <= to; v++) out[v - from] = this.y(mi, v % this.cap);
    return out;
  }

  /** Uncorrected log values of valid indices [from, to] into scratch `slot`. */
  rangeRaw(mi: number, from: number, to: number, slot: number): Float64Array {
    const out = scratch(slot, Math.max(0, to - from + 1));
    const r = this.logValue[mi]!;
    for (let v = from; v <= to; v++) out[v - from] = r[v % this.cap]!;
    return out;
  }

  /** Minutes since `from` of valid indices [from, to] into scratch `slot`. */
  rangeT(from: number, to: number, slot: number): Float64Array {
    const out = scratch(slot, Math.max(0, to - from + 1));
    for (let v = from; v <= to; v++)
      out[v - from] = (this.time[v % this.cap]! - this.time[from % this.cap]!) / 60_000;
    return out;
  }

  /** Corrected log p50 of valid index v: from the ring, or from the long history before it. */
  historyY(v: number): number {
    return v < this.valid - this.cap
      ? this.longMicro[v % this.longCap]! * 1e-6
      : this.y(0, v % this.cap);
  }

  /** Time (ms) of valid index v: from the ring, or (whole minutes) from the long history before it. */
  historyT(v: number): number {
    return v < this.valid - this.cap
      ? this.longMinute[v % this.longCap]! * 60_000
      : this.time[v % this.cap]!;
  }

  /** The points held, oldest first, back in the input unit. */
  points(floor: number): MinutePoint[] {
    const size = Math.min(this.valid, this.cap);
    const out: MinutePoint[] = [];
    for (let v = this.valid - size; v < this.valid; v++) {
      const p = v % this.cap;
      out.push({
        t: this.time[p]!,
        count: this.count[p]!,
        p50: Math.max(0, Math.exp(this.logValue[0][p]!) - floor),
        p99: Math.max(0, Math.exp(this.logValue[1][p]!) - floor),
      });
    }
    return out;
  }
}
