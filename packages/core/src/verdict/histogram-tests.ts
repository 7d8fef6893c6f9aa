/**
 * Statistics on log-bucketed histograms themselves (never on means): a
 * Mann-Whitney U from bucket counts, a test of the tail above the baseline's
 * p99, and quantiles with confidence intervals from the order statistics.
 * docs/verdicts.md "The test, on the histograms".
 */
import { bucketValue, GAMMA, Histogram } from '../histogram.ts';
import { normalQuantile, normalUpperTail } from '../detect/stats.ts';

/** z of a two-sided 95 % interval. */
const Z95 = normalQuantile(0.975);
/** A value's spread within its 1 % bucket, in log space (uniform over the bucket's width). */
const BUCKET_SD_LOG = Math.log(GAMMA) / Math.sqrt(12);

/** Bucket counts in ascending index order with their total: what every test here reads. */
export interface Counts {
  idx: readonly number[];
  cnt: readonly number[];
  count: number;
}

/** A histogram's counts, read once (pass Counts to several tests to skip the re-reads). */
export function countsOf(h: Histogram | Counts): Counts {
  if (!(h instanceof Histogram)) return h;
  const s = h.toSparse();
  return { idx: s.idx, cnt: s.cnt, count: h.count };
}

export interface MannWhitney {
  /** One-sided: candidate calls tend to be slower than baseline calls. */
  pValue: number;
  /** U / (n_c n_b): the chance a candidate call is slower than a baseline call, ties half. */
  probSlower: number;
}

/**
 * Mann-Whitney U of `candidate` against `baseline` from bucket counts. Calls in
 * one bucket are ties (mid-ranks); the variance is tie-corrected and the p-value
 * is the normal approximation with a continuity correction (histograms that reach
 * a verdict hold hundreds of calls a side).
 */
export function mannWhitneyHistograms(
  candidate: Histogram | Counts,
  baseline: Histogram | Counts,
): MannWhitney {
  const c = countsOf(candidate);
  const b = countsOf(baseline);
  const m = c.count;
  const n = b.count;
  if (m === 0 || n === 0) return { pValue: 1, probSlower: 0.5 };
  let u = 0;
  let below = 0; // baseline calls in buckets below the current one
  let tieSum = 0;
  let i = 0;
  let j = 0;
  while (i < c.idx.length || j < b.idx.length) {
    const ci = i < c.idx.length ? c.idx[i]! : Infinity;
    const bj = j < b.idx.length ? b.idx[j]! : Infinity;
    const at = Math.min(ci, bj);
    const nc = ci === at ? c.cnt[i++]! : 0;
    const nb = bj === at ? b.cnt[j++]! : 0;
    u += nc * (below + nb / 2);
    below += nb;
    const t = nc + nb;
    if (t > 1) tieSum += t * t * t - t;
  }
  const N = m + n;
  const mean = (m * n) / 2;
  const variance = ((m * n) / 12) * (N + 1 - tieSum / (N * (N - 1)));
  const pValue =
    variance > 0 ? normalUpperTail((u - mean - 0.5) / Math.sqrt(variance)) : u > mean ? 0 : 1;
  return { pValue: Math.min(1, pValue), probSlower: u / (m * n) };
}

/** The bucket index holding the call of rank `rank` (1-based) in ascending order. */
function bucketAtRank(s: Pick<Counts, 'idx' | 'cnt'>, rank: number): number {
  let seen = 0;
  for (let k = 0; k < s.idx.length; k++) {
    seen += s.cnt[k]!;
    if (seen >= rank) return s.idx[k]!;
  }
  return s.idx[s.idx.length - 1]!;
}

export interface TailTest {
  /** One-sided: a larger share of candidate calls than of baseline calls lies above the baseline's p99. */
  pValue: number;
  candidateShare: number;
  baselineShare: number;
}

/**
 * The tail above the baseline's p99 bucket: the share of candidate calls there
 * against the baseline's own share, a one-sided two-proportion z-test. Mann-Whitney
 * hardly moves when only the slowest calls slow down; this does.
 */
export function tailTest(
  candidate: Histogram | Counts,
  baseline: Histogram | Counts,
  q = 0.99,
): TailTest {
  const c = countsOf(candidate);
  const b = countsOf(baseline);
  const m = c.count;
  const n = b.count;
  if (m === 0 || n === 0) return { pValue: 1, candidateShare: 0, baselineShare: 0 };
  const edge = bucketAtRank(b, Math.max(1, Math.ceil(q * n)));
  const above = (s: Counts) => s.idx.reduce((sum, i, k) => (i > edge ? sum + s.cnt[k]! : sum), 0);
  const xc = above(c);
  const xb = above(b);
  const pc = xc / m;
  const pb = xb / n;
  const pooled = (xc + xb) / (m + n);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / m + 1 / n));
  const pValue = se > 0 ? normalUpperTail((pc - pb) / se) : pc > pb ? 0 : 1;
  return { pValue: Math.min(1, pValue), candidateShare: pc, baselineShare: pb };
}

export interface QuantileEstimate {
  /** µs */
  value: number;
  /** Standard error of ln(value + floor): the rank's binomial spread plus the bucket's width. */
  seLog: number;
}

/**
 * The q-quantile (µs) and its uncertainty: the rank of the sample quantile is
 * binomial (n, q), so a 95 % interval of ranks is nq ± 1.96·√(nq(1-q)); the values
 * at those ranks, read from the buckets, bound the quantile. Their half-width in
 * log space (above `floorUs`) is taken as 1.96 standard errors.
 */
export function quantileEstimate(
  h: Histogram | Counts,
  q: number,
  floorUs = 0,
  /** The quantile itself when known (Histogram.quantile clamps to the exact extremes). */
  known?: number,
): QuantileEstimate | null {
  const s = countsOf(h);
  const n = s.count;
  if (n === 0) return null;
  const value =
    known ??
    (h instanceof Histogram
      ? h.quantile(q)
      : bucketValue(bucketAtRank(s, Math.max(1, Math.ceil(q * n)))));
  const sd = Math.sqrt(n * q * (1 - q));
  const lo = bucketValue(bucketAtRank(s, Math.max(1, Math.floor(n * q - Z95 * sd))));
  const hi = bucketValue(bucketAtRank(s, Math.min(n, Math.ceil(n * q + Z95 * sd))));
  const f = Math.max(floorUs, 1e-3);
  const rankSe = (Math.log(hi + f) - Math.log(lo + f)) / (2 * Z95);
  return { value, seLog: Math.sqrt(rankSe * rankSe + BUCKET_SD_LOG * BUCKET_SD_LOG) };
}

export interface RatioInterval {
  value: number;
  low: number;
  high: number;
}

/**
 * candidate / baseline of one quantile with a 95 % interval, both read above
 * `floorUs` ((c + floor) / (b + floor): a gap view near zero compares above 1 ms).
 */
export function quantileRatio(
  candidate: QuantileEstimate,
  baseline: QuantileEstimate,
  floorUs = 0,
): RatioInterval {
  const f = Math.max(floorUs, 1e-3);
  const value = (candidate.value + f) / (baseline.value + f);
  const se = Math.hypot(candidate.seLog, baseline.seLog);
  return { value, low: value * Math.exp(-Z95 * se), high: value * Math.exp(Z95 * se) };
}
