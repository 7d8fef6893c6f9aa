/**
 * Log-bucketed latency histogram (DDSketch-style mapping, unbounded range).
 *
 * Bucket i holds values in (γ^(i-1), γ^i] microseconds with γ = (1+α)/(1-α).
 * Reporting 2γ^i/(γ+1) for a bucket keeps the relative error ≤ α for every
 * value in it, so any quantile read from the histogram is within α of the
 * exact sample quantile. α = 1% leaves headroom under the 2% product promise.
 * There is no upper or lower clip: indices are plain integers (negative below
 * 1 µs), and 0 / negative values (e.g. a gap where the callee outran its
 * caller's clock) fall into a dedicated zero bucket.
 *
 * The SQL function onset_bucket() in migrations/ mirrors bucketIndex(); keep
 * the two in step.
 */
export const RELATIVE_ACCURACY = 0.01;
export const GAMMA = (1 + RELATIVE_ACCURACY) / (1 - RELATIVE_ACCURACY);
const LOG_GAMMA = Math.log(GAMMA);
/** Values at or under this (µs) count as zero: 1 ns. */
export const ZERO_THRESHOLD_US = 0.001;
/** Index of the zero bucket; far below any real index (1 ns is about -349). */
export const ZERO_BUCKET = -1_000_000;

export function bucketIndex(us: number): number {
  if (!(us > ZERO_THRESHOLD_US)) return ZERO_BUCKET;
  return Math.ceil(Math.log(us) / LOG_GAMMA);
}

/**
 * Bucket values for the indices that occur (1 ns … far past any latency),
 * computed once with the same expression: merging a month of histograms
 * asks for ~10^5 of them, and Math.pow per call was most of that work.
 */
const TABLE_MIN = -1024;
const VALUE_TABLE = Float64Array.from(
  { length: 4096 },
  (_, k) => (2 * Math.pow(GAMMA, k + TABLE_MIN)) / (GAMMA + 1),
);

/** Representative value of a bucket (µs); within α of anything in it. */
export function bucketValue(index: number): number {
  if (index === ZERO_BUCKET) return 0;
  const k = index - TABLE_MIN;
  if (k >= 0 && k < VALUE_TABLE.length) return VALUE_TABLE[k]!;
  return (2 * Math.pow(GAMMA, index)) / (GAMMA + 1);
}

/** Upper bound of a bucket (µs), used for heatmap rows and threshold maths. */
export function bucketUpper(index: number): number {
  if (index === ZERO_BUCKET) return ZERO_THRESHOLD_US;
  return Math.pow(GAMMA, index);
}

/** The sparse wire/storage form: ascending indices with positive counts. */
export interface SparseHistogram {
  idx: number[];
  cnt: number[];
}

export class Histogram {
  private readonly counts = new Map<number, number>();
  /** Sorted bucket indices, cached between writes (quantile() is called several times per histogram). */
  private sorted: number[] | null = null;
  count = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;

  static fromSparse(s: SparseHistogram): Histogram {
    const h = new Histogram();
    h.addSparse(s);
    return h;
  }

  /** Record `n` observations of `us` microseconds. */
  record(us: number, n = 1): void {
    if (n <= 0 || !Number.isFinite(us)) return;
    const i = bucketIndex(us);
    this.sorted = null;
    this.counts.set(i, (this.counts.get(i) ?? 0) + n);
    this.count += n;
    this.sum += us * n;
    if (us < this.min) this.min = us;
    if (us > this.max) this.max = us;
  }

  /** Add counts by bucket (e.g. from storage); min/max/sum follow bucket values. */
  addSparse(s: SparseHistogram, exact?: { sum: number; min: number; max: number }): void {
    let added = 0;
    this.sorted = null;
    for (let k = 0; k < s.idx.length; k++) {
      const i = s.idx[k]!;
      const c = s.cnt[k]!;
      if (c <= 0) continue;
      this.counts.set(i, (this.counts.get(i) ?? 0) + c);
      added += c;
      if (!exact) this.sum += bucketValue(i) * c;
    }
    if (added === 0) return;
    this.count += added;
    if (exact) {
      this.sum += exact.sum;
      this.min = Math.min(this.min, exact.min);
      this.max = Math.max(this.max, exact.max);
    } else {
      this.min = Math.min(this.min, bucketValue(s.idx[0]!));
      this.max = Math.max(this.max, bucketValue(s.idx[s.idx.length - 1]!));
    }
  }

  merge(other: Histogram): this {
    this.sorted = null;
    for (const [i, c] of other.counts) this.counts.set(i, (this.counts.get(i) ?? 0) + c);
    this.count += other.count;
    this.sum += other.sum;
    this.min = Math.min(this.min, other.min);
    this.max = Math.max(this.max, other.max);
    return this;
  }

  private sortedIndices(): number[] {
    return (this.sorted ??= [...this.counts.keys()].sort((a, b) => a - b));
  }

  toSparse(): SparseHistogram {
    const idx = [...this.sortedIndices()];
    return { idx, cnt: idx.map((i) => this.counts.get(i)!) };
  }

  /**
   * The q-quantile (µs): the value of rank ceil(q·n) in sorted order, read
   * from its bucket. Exact min/max are returned at the ends so q=0 and q=1
   * are never approximations.
   */
  quantile(q: number): number {
    if (this.count === 0) return NaN;
    if (q <= 0) return this.min;
    if (q >= 1) return this.max;
    const rank = Math.max(1, Math.ceil(q * this.count));
    const idx = this.sortedIndices();
    let seen = 0;
    for (const i of idx) {
      seen += this.counts.get(i)!;
      if (seen >= rank) {
        // Clamp to the exact extremes: a bucket's representative may sit past them.
        return Math.min(this.max, Math.max(this.min, bucketValue(i)));
      }
    }
    return this.max;
  }

  /** Observations at or under `us` (bucket-resolution; exact counts live elsewhere). */
  countAtOrBelow(us: number): number {
    const limit = bucketIndex(us);
    let n = 0;
    for (const [i, c] of this.counts) if (i <= limit) n += c;
    return n;
  }

  buckets(): Array<{ index: number; count: number }> {
    return this.toSparse().idx.map((index) => ({ index, count: this.counts.get(index)! }));
  }
}
