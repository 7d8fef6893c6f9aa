/**
 * Small robust statistics used by the step detector. Everything here runs
 * only when an alarm is being confirmed or localised, never per point, so
 * clarity wins over speed.
 */

/** Median of the first `n` values of `a` (copied, `a` is not reordered). */
export function median(a: ArrayLike<number>, n = a.length): number {
  if (n === 0) return NaN;
  const s = new Float64Array(n);
  for (let i = 0; i < n; i++) s[i] = a[i]!;
  s.sort();
  const h = n >> 1;
  return n % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
}

/** The k-th smallest value (0-based) of `a`, reordering `a` in place (Hoare's quickselect). */
export function select(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}

/** Upper tail of the standard normal, P(Z > z), to ~1e-7 relative (W. J. Cody style rational erfc). */
export function normalUpperTail(z: number): number {
  return 0.5 * erfc(z / Math.SQRT2);
}

/** Complementary error function (Numerical Recipes' Chebyshev fit, relative error < 1.2e-7). */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t *
                              (-1.13520398 +
                                t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/**
 * One-sided Mann-Whitney test that the values in `hi` tend to exceed those in
 * `lo`. Returns the p-value.
 *
 * Small samples (the common case when confirming a fresh step: a handful of
 * new points against an hour of history) use the exact null distribution: the
 * number of orderings with U = mn - j is the number of partitions of j into at
 * most m parts of size ≤ n, i.e. a coefficient of the Gaussian binomial
 * [m+n choose m]_q. Ties are counted against the alternative there, which
 * keeps the exact p-value conservative. Larger samples use the normal
 * approximation with mid-ranks and the tie-corrected variance.
 */
export function mannWhitneyGreater(hi: ArrayLike<number>, lo: ArrayLike<number>): number {
  return mannWhitneySorted(Float64Array.from(hi).sort(), Float64Array.from(lo).sort());
}

/** mannWhitneyGreater for samples already sorted ascending (one merge pass). */
export function mannWhitneySorted(hi: Float64Array, lo: Float64Array): number {
  const m = hi.length;
  const n = lo.length;
  if (m === 0 || n === 0) return 1;
  // One merge over both sorted samples gives the strict U (ties count 0),
  // the mid-rank U (ties count 1/2) and the tie groups.
  let strict = 0;
  let ties = 0;
  let tieSum = 0;
  let i = 0;
  let j = 0;
  while (i < m || j < n) {
    const v = j >= n || (i < m && hi[i]! < lo[j]!) ? hi[i]! : lo[j]!;
    let ci = 0;
    let cj = 0;
    while (i < m && hi[i] === v) {
      i++;
      ci++;
    }
    while (j < n && lo[j] === v) {
      j++;
      cj++;
    }
    // The ci values of `hi` equal to v beat the j - cj values of `lo` below v.
    strict += ci * (j - cj);
    ties += ci * cj;
    const t = ci + cj;
    if (t > 1) tieSum += t * t * t - t;
  }
  const N = m + n;
  const u = strict + ties / 2;
  const mean = (m * n) / 2;
  const variance = ((m * n) / 12) * (N + 1 - tieSum / (N * (N - 1)));
  // Continuity correction of 1/2 towards the null.
  const approx = variance > 0 ? normalUpperTail((u - mean - 0.5) / Math.sqrt(variance)) : 1;
  const small = Math.min(m, n);
  const deficit = m * n - strict;
  // The exact path is cheap only when the smaller sample and the deficit are
  // small; it matters only when the approximation says "maybe significant".
  if (small <= 24 && deficit <= 4000 && approx < 0.01)
    return exactUpperTail(small, Math.max(m, n), deficit);
  return approx;
}

/**
 * P(U ≥ mn - deficit) for continuous data: the sum of the first
 * `deficit + 1` coefficients of [m+n choose m]_q divided by C(m+n, m).
 * Symmetric in m and n; pass the smaller as `m`.
 */
export function exactUpperTail(m: number, n: number, deficit: number): number {
  const D = deficit;
  // Coefficients of prod_{i=1..m} (1 - q^{n+i}) / (1 - q^i), truncated at q^D.
  const c = new Float64Array(D + 1);
  c[0] = 1;
  for (let i = 1; i <= m; i++) {
    const a = n + i;
    for (let d = D; d >= a; d--) c[d] = c[d]! - c[d - a]!; // times (1 - q^a)
    for (let d = i; d <= D; d++) c[d] = c[d]! + c[d - i]!; // divided by (1 - q^i)
  }
  let count = 0;
  for (let d = 0; d <= D; d++) count += c[d]!;
  return Math.min(1, count / binomial(m + n, m));
}

/** C(n, k) as a double (exact while it fits; fine up to ~1e300). */
export function binomial(n: number, k: number): number {
  k = Math.min(k, n - k);
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/**
 * A robust linear trend through (x, y): the slope joins the medians of the
 * two halves (split at the median x), the intercept is the median residual.
 * Breakdown point 25%, O(n log n), good enough to tell a diurnal ramp from a
 * step over an hour of points.
 */
export function robustTrend(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
): { slope: number; intercept: number } {
  const n = x.length;
  if (n < 4) return { slope: 0, intercept: median(y) };
  const h = n >> 1;
  // x is increasing in our use (time order).
  const x1 = median(sliceOf(x, 0, h));
  const x2 = median(sliceOf(x, n - h, n));
  const y1 = median(sliceOf(y, 0, h));
  const y2 = median(sliceOf(y, n - h, n));
  const slope = x2 > x1 ? (y2 - y1) / (x2 - x1) : 0;
  const r = new Float64Array(n);
  for (let i = 0; i < n; i++) r[i] = y[i]! - slope * x[i]!;
  return { slope, intercept: median(r) };
}

function sliceOf(a: ArrayLike<number>, from: number, to: number): Float64Array {
  const out = new Float64Array(to - from);
  for (let i = from; i < to; i++) out[i - from] = a[i]!;
  return out;
}

/**
 * Exceedance test: does `after` put more (dir > 0) or fewer (dir < 0) points
 * above the r-th largest value of `before` than chance would? Sensitive to a
 * tail that moved in only some minutes (a minute with 5 events shows a slow
 * 5% of events a quarter of the time), where a rank-sum test is weak.
 *
 * Under exchangeability the number X of m after-points above the r-th
 * largest of n before-points has P(X = x) = C(r-1+x, x) C(n-r+m-x, m-x) /
 * C(n+m, m) (Gumbel & von Schelling). Ties are counted against the
 * alternative, so the p-value stays valid for bucketed data.
 */
export function exceedanceTest(
  after: ArrayLike<number>,
  before: ArrayLike<number>,
  r: number,
  dir: number,
): number {
  return exceedanceSorted(
    Float64Array.from(after).sort(),
    Float64Array.from(before).sort(),
    r,
    dir,
  );
}

/** exceedanceTest for samples already sorted ascending. */
export function exceedanceSorted(
  after: Float64Array,
  before: Float64Array,
  r: number,
  dir: number,
): number {
  const m = after.length;
  const n = before.length;
  if (m === 0 || n === 0 || r < 1 || r > n) return 1;
  const theta = before[n - r]!;
  // Points above (dir > 0) or at/above (dir < 0) the threshold, by binary search.
  let lo = 0;
  let hi = m;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (dir > 0 ? after[mid]! <= theta : after[mid]! < theta) lo = mid + 1;
    else hi = mid;
  }
  const x = m - lo;
  // Point probabilities by the ratio recurrence P(x+1)/P(x) = (r+x)(m-x) / ((x+1)(n-r+m-x)).
  const total = binomial(n + m, m);
  let px = binomial(n - r + m, m) / total; // P(X = 0)
  let tail = 0;
  for (let k = 0; k <= m; k++) {
    if (dir > 0 ? k >= x : k <= x) tail += px;
    px = (px * (r + k) * (m - k)) / ((k + 1) * (n - r + m - k));
  }
  return Math.min(1, tail);
}

/** Standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9 after one refinement-free pass). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) return p <= 0 ? -Infinity : Infinity;
  const a = [
    -3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2,
    -3.066479806614716e1, 2.506628277459239,
  ];
  const b = [
    -5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1,
    -1.328068155288572e1,
  ];
  const c = [
    -7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734,
    4.374664141464968, 2.938163982698783,
  ];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    );
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/**
 * Where the rank-ceil(q·n) value of n events sits in their distribution, as
 * a standard normal quantile: Φ⁻¹(k / (n + 1)). A minute with 5 events
 * reports as "p99" its maximum, which sits near the 83rd percentile, not the
 * 99th; this is the size of that bias in units of the distribution's spread.
 */
export function orderStatisticZ(q: number, n: number): number {
  const k = Math.max(1, Math.ceil(q * n));
  return normalQuantile(k / (n + 1));
}

/**
 * P(X ≥ x) for X the number of m new exchangeable points above the r-th
 * largest of n earlier ones (Gumbel-von Schelling), by the ratio recurrence.
 */
export function gvsUpper(n: number, r: number, m: number, x: number): number {
  if (x <= 0) return 1;
  if (x > m) return 0;
  const total = binomial(n + m, m);
  let px = binomial(n - r + m, m) / total; // P(X = 0)
  let cdf = 0;
  for (let k = 0; k < x; k++) {
    cdf += px;
    px = (px * (r + k) * (m - k)) / ((k + 1) * (n - r + m - k));
  }
  return Math.max(0, Math.min(1, 1 - cdf));
}
