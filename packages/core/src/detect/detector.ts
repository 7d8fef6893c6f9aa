/**
 * Online step-change detector for one series (method and evaluation:
 * docs/detection.md).
 *
 * Per quantile (p50, p99), on y = log(value + floor), corrected for the
 * order-statistic bias of small counts:
 *  1. a robust Holt baseline (level + slope, so diurnal ramps do not lag),
 *     fed 16 points late and extrapolated, forecasts each point;
 *  2. the residual is standardised by a count-aware noise model
 *     σ² = τ² + A/count + resolution² fitted on first differences, then
 *     calibrated by the long-run variance of the scores themselves;
 *  3. CUSUMs raise alarms: a fast and a slow pair on the clipped scores, and
 *     a pair on the share of minutes above the regime's upper quantile (a
 *     tail that moved in only some minutes); the start of the alarming run is
 *     the provisional onset;
 *  4. an alarm is confirmed by rank tests (Mann-Whitney, exceedances) of the
 *     points since the onset against up to `beforePoints` earlier ones,
 *     shifted by `minRatio`, raw and detrended, Bonferroni over tests,
 *     candidate onsets and retests; or written off as drift;
 *  5. the onset is localised on the likelihood profile of the split (its
 *     posterior median), with its uncertainty interval; the other quantile
 *     joins if it moved too;
 *  6. three slow paths for what the CUSUMs and a 120-point history cannot
 *     confirm: in noisy series, an unshifted (no-margin) rank test with a
 *     trend pooled from both sides (small steps); a count of new extremes
 *     against ~12 hours of history kept as block maxima (a slow tail that
 *     shows in only some minutes of a sparse series); and a long scan of
 *     the p50 (480 points before a split) where a variogram of block
 *     medians shows no daily cycle (small steps in sparse series).
 *
 * Work per point is O(1), plus the long scan every 32 points in calm
 * series; tests run only on alarms, new extremes and promising scans. The
 * state is a few numbers per quantile, the block maxima of the long history,
 * a ring of the last beforePoints+maxAfterPoints points and the p50 before
 * it, and round-trips through JSON, so a pass only processes new points.
 */
import { decodeState, encodeState } from './codec.ts';
import {
  exceedanceSorted,
  gvsUpper,
  mannWhitneySorted,
  median,
  normalQuantile,
  orderStatisticZ,
  robustTrend,
  select,
} from './stats.ts';
import {
  resolveDetectOptions,
  type DetectOptions,
  type LevelSummary,
  type MinutePoint,
  type ResolvedDetectOptions,
  type StepChange,
  type StepMetric,
} from './types.ts';

const METRICS: readonly StepMetric[] = ['p50', 'p99'];
/** Rounded to 1e-6 (far below the histograms' 1% resolution), so the state's JSON stays short. */
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const Z99 = normalQuantile(0.99);
/** Memory (points) of the spread estimate used by the small-count correction. */
const SPREAD_MEMORY = 512;
const Z_CACHE = 4096;
const zCache: [Float64Array, Float64Array] = [
  new Float64Array(Z_CACHE + 1).fill(NaN),
  new Float64Array(Z_CACHE + 1).fill(NaN),
];
/** orderStatisticZ for p50 (which 0) or p99 (which 1), cached for common counts. */
function zAt(which: number, count: number): number {
  const n = Math.max(1, Math.round(count));
  if (n > Z_CACHE) return orderStatisticZ(which ? 0.99 : 0.5, n);
  const cache = zCache[which]!;
  let z = cache[n]!;
  if (Number.isNaN(z)) z = cache[n] = orderStatisticZ(which ? 0.99 : 0.5, n);
  return z;
}
/** Baseline smoothing (Holt): level gain and slope gain. */
const HOLT_ALPHA = 0.1;
const HOLT_BETA = 0.02;
/** The baseline learns from points this far back; CUSUM runs above SUSPECT keep their points out of it. */
const BASELINE_LAG = 16;
const SUSPECT = 0.75;
/** Largest believable drift of the baseline, log units per minute (~×1.35 per hour). */
const MAX_SLOPE = 0.005;
/** E[min(Z², 16)] for standard normal Z, and the memory (points) of the residual calibration. */
const WINSOR_4SD = 0.9987;
const CALIBRATION_MEMORY = 256;
/** Time scale of the calibration: sums decay by SPAN_DECAY per point (~16 points); SPAN_NORM turns their variance into a per-point one. */
const SPAN_DECAY = 1 - 1 / 32;
const SPAN_NORM = 1 - SPAN_DECAY * SPAN_DECAY;
/** E[min(Z², 4)] for standard normal Z. */
const WINSOR_2SD = 0.9211;
/** Noise model memory (points). */
const NOISE_MEMORY = 128;
/** Fewest points on each side of a split that a confirmation accepts. */
const MIN_BEFORE = 8;
const MIN_AFTER = 3;
/** Significance for a second quantile to join a change confirmed on the first. */
const JOIN_ALPHA = 1e-3;
/** Tail share: upper quantile of the regime, its window and refresh period (points), CUSUM threshold. */
const TAIL_QUANTILE = 0.95;
const TAIL_WINDOW = 64;
const TAIL_REFRESH = 32;
/**
 * New extremes (see extremes()): block size and number of blocks of the long
 * history, window (points) of an episode, fewest exceedances for a test,
 * fewest history points, noise gate (sd of a point, log units) and margin
 * (log units) above the history's second largest value.
 */
const XBLK = 32;
const XB = 22;
const XW = 120;
const XMINX = 3;
const XMINN = 192;
const XSD = 0.3;
const XMARGIN = 1.4;
/**
 * Unshifted rank test (see unshiftedTest()): Bonferroni penalty, fewest
 * after points, noise gate (sd of a point, log units), and the margin test
 * p-value under which it is tried.
 */
const NM_PENALTY = 10;
const NM_MIN_AFTER = 8;
const NM_SD = 0.25;
const NM_GATE = 0.05;
/**
 * Long scan (see longScan()): points of history before and after a split
 * (most, fewest), fewest before, how often it runs (points), and the
 * Bonferroni factor for choosing the split (among up to ~500) and for
 * repeating the scan.
 */
const LONG_BEFORE = 480;
const LONG_MAX_AFTER = 180;
const LONG_MIN_AFTER = 64;
const LONG_MIN_BEFORE = 120;
const LONG_EVERY = 32;
const LONG_PENALTY = 200;
/** Points of the ring kept before the scan's earliest split (localise() looks 30 back). */
const LONG_RING_MARGIN = 40;
const LONG_SCREEN = 4;
/**
 * Slow wander (see wander()): block size (points), blocks of differences
 * kept, fewest lag-8 differences for a verdict, and the largest ratio of the
 * lower third of |lag-8 differences| to the median |lag-1 difference| of
 * block medians that still counts as calm (for stationary noise it is
 * ~0.64; a daily cycle drives it to 1-40).
 */
const WANDER_BLOCK = 32;
const WANDER_KEEP = 24;
const WANDER_MIN = 16;
const WANDER_RATIO = 0.8;
/** An unconfirmed alarm is retested after waited/RETEST_GROWTH more points (a geometric schedule). */
const RETEST_GROWTH = 2;
const TAIL_H = 6;
/** The slow level CUSUM: clip and threshold (its reference is cusumK / 2). */
const SLOW_CLIP = 2;
const SLOW_H = 12;
/** Finite sentinels keep the state plain JSON (JSON has no Infinity). */
const NO_THRESHOLD = Number.MAX_VALUE;
const NEVER = -1e9;
/**
 * The exceedance tests count points above these upper shares of the
 * history: 15% both ways; then, for regressions, the top 2% (new extremes)
 * and, for improvements, the top 30% (a slow tail that showed in up to a
 * third of the minutes and is gone: the after points stop reaching it).
 */
const EXCEEDANCE_SHARE = 0.15;
const TOP_SHARE = 0.02;
const VANISHED_SHARE = 0.3;
/** An alarm whose test is below this p-value is not written off before maxAfterPoints. */
const PROMISING_P = 1e-2;
/** Onset interval: splits whose log-likelihood ratio is within this of the best (≈95%). */
const ONSET_LR_DROP = 4;

interface MetricState {
  warm: number;
  level: number;
  slope: number;
  lastT: number;
  /** Last point (valid index) fed to the baseline. */
  fed: number;
  // Noise model: decayed sums for the regression of squared first differences on 1/count.
  w: number;
  su: number;
  suu: number;
  sd: number;
  sud: number;
  a: number;
  tau2: number;
  // Calibration of standardised residuals: their decayed running sum, the EWMA of its square, the scale implied.
  zsum: number;
  cm2: number;
  kappa: number;
  // Two-sided CUSUM and the start of each run (valid-point index).
  up: number;
  dn: number;
  upStart: number;
  dnStart: number;
  us: number;
  ds: number;
  usStart: number;
  dsStart: number;
  // Tail-share CUSUMs: is the share of points above the regime's upper
  // quantile (thr) growing or shrinking? A tail that moved in only some
  // minutes (sparse p99) shows up here long before it moves the level.
  thr: number;
  thrAt: number;
  pe: number;
  /** p0 the increments below were computed for: above/below-threshold steps of the up and down CUSUMs. */
  p0: number;
  lu1: number;
  lu0: number;
  ld1: number;
  ld0: number;
  eu: number;
  ed: number;
  euStart: number;
  edStart: number;
  // Pending alarm: direction (0 none), source (0 level, 1 tail share), onset and next test (valid-point indices).
  alarm: number;
  src: number;
  /** Tests run for the pending alarm (Bonferroni over retests). */
  tests: number;
  onset: number;
  nextTest: number;
  regimeStart: number;
  // New extremes over a long history (see extremes()): closed blocks of
  // XBLK points (start, points, top two values), the open block, the
  // frozen threshold with its history size, and the exceedances since.
  xs: number[];
  xn: number[];
  x1: number[];
  x2: number[];
  cs: number;
  cn: number;
  c1: number;
  c2: number;
  xt: number;
  xN: number;
  xe: number[];
  xk: number;
  // Slow wander (daily cycles), tracked for the p50: medians of the last 9
  // blocks of WANDER_BLOCK points, the last |lag-1| and |lag-8| differences
  // of them, and how many verdicts in a row found no wander beyond noise (the long scan needs one).
  wm: number[];
  w1: number[];
  w8: number[];
  calm: number;
}

interface SplitTest {
  p: number;
  /** Confirmed by an exceedance test (localise on the share beyond `theta`). */
  tail: boolean;
  theta: number;
  onset: number;
}

interface RecentChange {
  onset: number;
  dir: number;
  unc: number;
}

export interface DetectorStateJSON {
  v: 1;
  opts: ResolvedDetectOptions;
  /** Points ever pushed (global index of the next one) and points with data. */
  n: number;
  nv: number;
  lastT: number | null;
  /** Ring contents, oldest first. */
  ring: { t: number[]; c: number[]; g: number[]; y50: number[]; y99: number[] };
  /**
   * The p50 history just before the ring, oldest first, for the long scan:
   * `t` in whole minutes (the first absolute, then differences from the
   * previous point), `y` the corrected log p50 in micro-units. Absent in
   * older states.
   */
  long?: { t: number[]; y: number[] };
  /** Decayed sums of the spread estimate. */
  spread: [number, number, number];
  metrics: MetricState[];
  recent: RecentChange[];
}

const NONE: StepChange[] = [];

/**
 * Scratch buffers for the tests (one set per thread; detection is
 * synchronous, so detectors take turns). Slots: 0 tail threshold,
 * 1 before/window values, 2 after values, 3 times, 4-5 sorted copies,
 * 6-7 detrended values, 8-10 localisation sums, 11 medians.
 */
const SCRATCH: Float64Array[] = [];
function scratch(slot: number, n: number): Float64Array {
  let b = SCRATCH[slot];
  if (!b || b.length < n) b = SCRATCH[slot] = new Float64Array(Math.max(n, 512));
  return b.subarray(0, n);
}
function medianOf(a: Float64Array): number {
  const n = a.length;
  if (n === 0) return NaN;
  const s = scratch(11, n);
  s.set(a);
  s.sort();
  const h = n >> 1;
  return n % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
}

function newMetricState(): MetricState {
  return {
    warm: 0,
    level: 0,
    slope: 0,
    lastT: 0,
    fed: 0,
    w: 0,
    su: 0,
    suu: 0,
    sd: 0,
    sud: 0,
    a: 0,
    tau2: 0,
    zsum: 0,
    cm2: 1 / SPAN_NORM,
    kappa: 1,
    up: 0,
    dn: 0,
    upStart: 0,
    dnStart: 0,
    us: 0,
    ds: 0,
    usStart: 0,
    dsStart: 0,
    thr: NO_THRESHOLD,
    thrAt: NEVER,
    pe: 0.1,
    p0: 0,
    lu1: 0,
    lu0: 0,
    ld1: 0,
    ld0: 0,
    eu: 0,
    ed: 0,
    euStart: 0,
    edStart: 0,
    alarm: 0,
    src: 0,
    tests: 0,
    onset: 0,
    nextTest: 0,
    regimeStart: 0,
    xs: [],
    xn: [],
    x1: [],
    x2: [],
    cs: 0,
    cn: 0,
    c1: -NO_THRESHOLD,
    c2: -NO_THRESHOLD,
    xt: NO_THRESHOLD,
    xN: 0,
    xe: [],
    xk: 0,
    wm: [],
    w1: [],
    w8: [],
    calm: 0,
  };
}

/** The exceedance before j in the episode (or -1). */
function previousExceedance(s: MetricState, j: number): number {
  let prev = -1;
  for (const e of s.xe) if (e < j) prev = e;
  return prev;
}

function copyMetricState(m: MetricState): MetricState {
  return {
    ...m,
    xs: [...m.xs],
    xn: [...m.xn],
    x1: [...m.x1],
    x2: [...m.x2],
    xe: [...m.xe],
    wm: [...m.wm],
    w1: [...m.w1],
    w8: [...m.w8],
  };
}

export class StepDetector {
  readonly opts: ResolvedDetectOptions;
  private n = 0;
  private nv = 0;
  private lastT = -Infinity;
  private readonly cap: number;
  /**
   * p50 history older than the ring, for the long scan (slot = valid index %
   * longCap): time in whole minutes and corrected log p50 in micro-units, as
   * 32-bit integers (half the memory of doubles; the scan needs no more).
   */
  private readonly longCap: number;
  private readonly lt: Int32Array;
  private readonly ly: Int32Array;
  /** First valid index the long history holds (later than 0 after restoring a state that kept less of it). */
  private longFrom = 0;
  private readonly rt: Float64Array;
  private readonly rc: Float64Array;
  private readonly rg: Float64Array;
  /** log(value + floor) of p50 and p99 (read through `y()`, which corrects small counts). */
  private readonly ry: [Float64Array, Float64Array];
  /** Per point, the small-count correction per unit of spread: -Φ⁻¹ level of its p50, Φ⁻¹(0.99) - level of its p99. */
  private readonly rz: [Float64Array, Float64Array];
  /** Spread of the event distribution in log units (σ_u), from p99 - p50 against their order-statistic levels. */
  private sxz = 0;
  private szz = 0;
  private sigmaU = 0;
  private readonly ms: [MetricState, MetricState];
  private recent: RecentChange[] = [];
  private readonly logMin: number;
  private readonly q2: number;

  constructor(opts: DetectOptions = {}) {
    this.opts = resolveDetectOptions(opts);
    this.cap = this.opts.beforePoints + this.opts.maxAfterPoints + 4;
    this.longCap = Math.max(0, LONG_BEFORE + LONG_MAX_AFTER - this.cap);
    this.lt = new Int32Array(this.longCap);
    this.ly = new Int32Array(this.longCap);
    this.rt = new Float64Array(this.cap);
    this.rc = new Float64Array(this.cap);
    this.rg = new Float64Array(this.cap);
    this.ry = [new Float64Array(this.cap), new Float64Array(this.cap)];
    this.rz = [new Float64Array(this.cap), new Float64Array(this.cap)];
    this.ms = [newMetricState(), newMetricState()];
    this.logMin = Math.log(this.opts.minRatio);
    this.q2 = this.opts.resolution * this.opts.resolution;
  }

  /** Points pushed so far (the index the next point gets). */
  get pointsSeen(): number {
    return this.n;
  }

  /**
   * The points the detector still holds (the last beforePoints +
   * maxAfterPoints with data), oldest first, back in the input unit: what a
   * caller needs to judge recovery without reading the state.
   */
  recentPoints(): MinutePoint[] {
    const floor = this.opts.floor;
    const size = Math.min(this.nv, this.cap);
    const out: MinutePoint[] = [];
    for (let v = this.nv - size; v < this.nv; v++) {
      const p = v % this.cap;
      out.push({
        t: this.rt[p]!,
        count: this.rc[p]!,
        p50: Math.max(0, Math.exp(this.ry[0][p]!) - floor),
        p99: Math.max(0, Math.exp(this.ry[1][p]!) - floor),
      });
    }
    return out;
  }

  /** The state in its compact binary form (see codec.ts). */
  encode(): Uint8Array {
    return encodeState(this.toJSON());
  }

  /** A detector restored from `encode()`'s bytes (any supported version). */
  static decode(bytes: Uint8Array): StepDetector {
    return StepDetector.fromJSON(decodeState(bytes));
  }

  /** Feed points in time order; returns the changes confirmed by them. */
  pushAll(points: readonly MinutePoint[]): StepChange[] {
    let out: StepChange[] = NONE;
    for (let i = 0; i < points.length; i++) {
      const r = this.push(points[i]!);
      if (r.length) out = out === NONE ? [...r] : out.concat(r);
    }
    return out;
  }

  /**
   * Feed one point. Every call advances the point index, even for points
   * without data (count 0, non-finite) or out of order (t not after the last),
   * which are otherwise ignored.
   */
  push(p: MinutePoint): StepChange[] {
    const g = this.n++;
    const c = p.count;
    if (!(c > 0) || !(p.t > this.lastT)) return NONE;
    const floor = this.opts.floor;
    const v50 = Math.max(p.p50, 0) + floor;
    const v99 = Math.max(p.p99, 0) + floor;
    if (!(v50 > 0 && v99 > 0 && v50 < Infinity && v99 < Infinity)) return NONE;
    this.lastT = p.t;
    const vi = this.nv++;
    const pos = vi % this.cap;
    if (vi >= this.cap && this.longCap > 0) {
      // The ring's oldest point moves to the long p50 history.
      const lp = (vi - this.cap) % this.longCap;
      this.lt[lp] = Math.round(this.rt[pos]! / 60_000);
      this.ly[lp] = Math.round(this.y(0, pos) * 1e6);
    }
    this.rt[pos] = p.t;
    this.rc[pos] = c;
    this.rz[0][pos] = -zAt(0, c);
    this.rz[1][pos] = Z99 - zAt(1, c);
    this.rg[pos] = g;
    const l50 = round6(Math.log(v50));
    const l99 = round6(Math.log(v99));
    this.ry[0][pos] = l50;
    this.ry[1][pos] = l99;
    // Learn the distribution's spread from how far p99 sits above p50 at the
    // counts seen (see y()).
    const dz = zAt(1, c) - zAt(0, c);
    if (dz > 0) {
      const rhoS = 1 - 1 / SPREAD_MEMORY;
      this.sxz = rhoS * this.sxz + dz * Math.min(Math.max(l99 - l50, 0), 3 * dz);
      this.szz = rhoS * this.szz + dz * dz;
      this.sigmaU = this.szz > 1 ? Math.max(0, this.sxz / this.szz) : 0;
    }
    let out: StepChange[] = NONE;
    for (let mi = 0; mi < 2; mi++) {
      const ch = this.stepMetric(mi, vi);
      if (ch) out = out === NONE ? [ch] : [...out, ch];
    }
    // (The long scan is for the p50 only, so only the p50's wander is tracked.)
    if (vi % WANDER_BLOCK === WANDER_BLOCK - 1 && vi >= WANDER_BLOCK && this.cap >= WANDER_BLOCK)
      this.wander(vi);
    const m0 = this.ms[0];
    if (
      out === NONE &&
      vi % LONG_EVERY === 0 &&
      m0.calm > 0 &&
      m0.alarm === 0 &&
      m0.warm >= this.opts.warmupPoints
    ) {
      const ch = this.longScan(vi);
      if (ch) out = [ch];
    }
    return out;
  }

  // ---- per-point work -------------------------------------------------

  private stepMetric(mi: number, vi: number): StepChange | null {
    const s = this.ms[mi]!;
    const o = this.opts;
    const pos = vi % this.cap;
    const y = this.y(mi, pos);
    const c = this.rc[pos]!;
    const t = this.rt[pos]!;
    if (s.warm < o.warmupPoints) {
      if (s.warm === 0) s.regimeStart = vi;
      s.warm++;
      if (s.warm === o.warmupPoints) this.initRegime(mi, vi - o.warmupPoints + 1, vi, 0);
      return null;
    }

    // Noise model from the first difference with the previous point.
    const pp = (vi - 1) % this.cap;
    const d = y - this.y(mi, pp);
    const u = 1 / c + 1 / this.rc[pp]!;
    const pred = 2 * s.tau2 + s.a * u + 2 * this.q2;
    // Winsorised at 2 sd (and rescaled to stay unbiased for Gaussian noise):
    // robust up to ~20% of wild minutes, e.g. a slow tail showing in some.
    const d2 = Math.min(d * d, 4 * pred) / WINSOR_2SD;
    const rho = 1 - 1 / NOISE_MEMORY;
    s.w = rho * s.w + 1;
    s.su = rho * s.su + u;
    s.suu = rho * s.suu + u * u;
    s.sd = rho * s.sd + d2;
    s.sud = rho * s.sud + u * d2;
    // The fit moves slowly (memory 128 points): refresh it every few points.
    if ((vi & 7) === 0) this.solveNoise(s);

    // Forecast, standardise, clip, CUSUM.
    // The baseline runs BASELINE_LAG points behind and is extrapolated to now,
    // so the first points of a step cannot pull it along before the CUSUM has
    // seen them (a fast baseline swallows small steps in sparse series).
    const f = s.level + s.slope * Math.max(0, (t - s.lastT) / 60_000);
    const sigma = Math.sqrt(s.tau2 + s.a / c + this.q2);
    const e = y - f;
    const cl = o.clip;
    // Calibrate: the noise model misses the baseline's own error (shared by
    // many consecutive forecasts) and minute-to-minute correlation (load
    // wanders), and a CUSUM of correlated scores alarms far more often than
    // its threshold promises. Scale by the long-run variance of the residuals
    // at the CUSUM's time scale: the variance of their exponentially weighted
    // sums over ~CALIBRATION_SPAN points, per point.
    const zr0 = e / sigma;
    const zr = zr0 > 4 ? 4 : zr0 < -4 ? -4 : zr0;
    let z = zr / s.kappa;
    if (z > cl) z = cl;
    else if (z < -cl) z = -cl;
    // (Learn from every point outside a pending alarm: leaving out points
    // where a CUSUM is merely building would leave out the large residuals.)
    if (s.alarm === 0) {
      const g = 1 / CALIBRATION_MEMORY;
      s.zsum = SPAN_DECAY * s.zsum + zr;
      s.cm2 += g * (s.zsum * s.zsum - s.cm2);
      if ((vi & 7) === 4)
        s.kappa = Math.min(5, Math.max(0.8, Math.sqrt((s.cm2 * SPAN_NORM) / WINSOR_4SD)));
    }
    const k = o.cusumK;
    if (s.up === 0) s.upStart = vi;
    s.up = Math.max(0, s.up + z - k);
    if (s.dn === 0) s.dnStart = vi;
    s.dn = Math.max(0, s.dn - z - k);
    // A slower pair for small shifts (half the reference, tighter clip, higher threshold).
    const zs = z > SLOW_CLIP ? SLOW_CLIP : z < -SLOW_CLIP ? -SLOW_CLIP : z;
    if (s.us === 0) s.usStart = vi;
    s.us = Math.max(0, s.us + zs - k / 2);
    if (s.ds === 0) s.dsStart = vi;
    s.ds = Math.max(0, s.ds - zs - k / 2);

    // Feed the baseline the point BASELINE_LAG back, unless it belongs to a
    // CUSUM run that is building up or to a pending alarm (a suspected step).
    const h = o.cusumH;
    const j = vi - BASELINE_LAG;
    if (j > s.fed) {
      s.fed = j;
      const suspect =
        (s.alarm !== 0 && j >= s.onset) ||
        (s.up > SUSPECT * o.cusumH && j >= s.upStart) ||
        (s.dn > SUSPECT * o.cusumH && j >= s.dnStart) ||
        (s.us > SUSPECT * SLOW_H && j >= s.usStart) ||
        (s.ds > SUSPECT * SLOW_H && j >= s.dsStart);
      if (!suspect) this.feedBaseline(s, mi, j);
    }

    // Tail share: Bernoulli CUSUMs on "above the regime's upper quantile".
    const brewing = s.alarm !== 0 || s.eu > TAIL_H / 2 || s.ed > TAIL_H / 2;
    if (!brewing && vi - s.thrAt >= TAIL_REFRESH && vi - s.regimeStart >= MIN_BEFORE)
      this.refreshThreshold(mi, vi);
    if (s.thr !== NO_THRESHOLD) {
      const b = y > s.thr;
      const p0 = s.pe < 0.02 ? 0.02 : s.pe > 0.3 ? 0.3 : s.pe;
      if (Math.abs(p0 - s.p0) > 0.002) this.tailIncrements(s, p0);
      if (s.eu === 0) s.euStart = vi;
      s.eu = Math.max(0, s.eu + (b ? s.lu1 : s.lu0));
      if (s.ed === 0) s.edStart = vi;
      s.ed = Math.max(0, s.ed + (b ? s.ld1 : s.ld0));
      if (!brewing) s.pe += ((b ? 1 : 0) - s.pe) / NOISE_MEMORY;
    }

    // Alarm bookkeeping.
    if (s.alarm !== 0) {
      const run =
        s.src === 0
          ? s.alarm > 0
            ? s.up
            : s.dn
          : s.src === 1
            ? s.alarm > 0
              ? s.eu
              : s.ed
            : s.alarm > 0
              ? s.us
              : s.ds;
      if (run === 0) s.alarm = 0; // it was a blip
    }
    // Evidence the other way while an alarm is pending: that alarm was drift
    // (the baseline stopped following), the new one may be a step.
    if (s.alarm !== 0 && (s.alarm > 0 ? s.dn > h || s.ed > TAIL_H : s.up > h || s.eu > TAIL_H))
      s.alarm = 0;
    if (s.alarm === 0) {
      if (s.up > h || s.dn > h) {
        s.alarm = s.up > h ? 1 : -1;
        s.src = 0;
        s.onset = s.alarm > 0 ? s.upStart : s.dnStart;
      } else if (s.eu > TAIL_H || s.ed > TAIL_H) {
        s.alarm = s.eu > TAIL_H ? 1 : -1;
        s.src = 1;
        s.onset = s.alarm > 0 ? s.euStart : s.edStart;
      } else if (s.us > SLOW_H || s.ds > SLOW_H) {
        s.alarm = s.us > SLOW_H ? 1 : -1;
        s.src = 2;
        s.onset = s.alarm > 0 ? s.usStart : s.dsStart;
      }
      if (s.alarm !== 0) {
        s.onset = Math.max(s.onset, s.regimeStart + MIN_BEFORE);
        s.nextTest = vi;
        s.tests = 0;
      }
    }
    if (s.alarm !== 0 && vi >= s.nextTest) {
      const ch = this.tryConfirm(mi, vi);
      if (ch) return ch;
    }
    return this.extremes(mi, vi, y);
  }

  /**
   * Does this quantile wander more slowly than its noise, as a daily cycle
   * does? Every WANDER_BLOCK points, the block's median joins the last
   * nine; the |difference| with the previous one and with the one eight
   * blocks back (~4 hours) join the last WANDER_KEEP of each. For noise
   * (and a rare step, which touches one lag-1 and eight lag-8 differences
   * of 24) the lower third of |lag-8| sits below the median |lag-1|; a
   * daily cycle moves block medians 4 hours apart by up to 1.1× its
   * amplitude and pushes it above. Calm series only get the long scan.
   */
  private wander(vi: number): void {
    const s = this.ms[0];
    // The block's (upper) median, by selection rather than a sort.
    const block = this.rangeY(0, vi - WANDER_BLOCK + 1, vi, 1);
    const m = round6(select(block, WANDER_BLOCK >> 1));
    s.wm.push(m);
    if (s.wm.length > 9) s.wm.shift();
    const k = s.wm.length;
    if (k >= 2) {
      s.w1.push(round6(Math.abs(m - s.wm[k - 2]!)));
      if (s.w1.length > WANDER_KEEP) s.w1.shift();
    }
    if (k === 9) {
      s.w8.push(round6(Math.abs(m - s.wm[0]!)));
      if (s.w8.length > WANDER_KEEP) s.w8.shift();
    }
    let calm = false;
    if (s.w8.length >= WANDER_MIN) {
      const a8 = scratch(1, s.w8.length);
      a8.set(s.w8);
      const a1 = scratch(3, s.w1.length);
      a1.set(s.w1);
      const lower8 = select(a8, Math.floor((a8.length - 1) / 3));
      const med1 = select(a1, a1.length >> 1);
      calm = lower8 <= WANDER_RATIO * med1;
    }
    s.calm = calm ? s.calm + 1 : 0;
  }

  /**
   * The long scan, for small p50 steps in calm series. A 1.25× step at a
   * per-minute sd of 0.4 (a few events a minute) is 0.55 sd: the margin
   * test cannot confirm it, and the unshifted one needs more than 120
   * points a side to reach α with its penalties, while the CUSUMs' baseline
   * absorbs it within ~30 points. So every LONG_EVERY points the best
   * mean-shift split with LONG_MIN_AFTER..LONG_MAX_AFTER points after it is
   * found (unweighted means of values winsorised around the baseline)
   * against up to LONG_BEFORE points before it (in the regime),
   * and tested unshifted as in unshiftedTest() (raw and detrended, medians
   * at least minRatio apart), times LONG_PENALTY for the choice of split.
   * Only where the p50 shows no slow wander (see wander()): over 8 hours a
   * daily cycle is a ramp or a bend that no linear trend removes, and a
   * rank test over it would call it a step.
   */
  private longScan(now: number): StepChange | null {
    const s = this.ms[0]!;
    const from = Math.max(
      s.regimeStart,
      now - LONG_BEFORE - LONG_MAX_AFTER + 1,
      this.nv - this.cap - this.longCap,
      this.longFrom,
      0,
    );
    const N = now - from + 1;
    // The split must stay well inside the ring, where localise() and the
    // report read (with small windows the ring is shorter than the scan).
    const lo = Math.max(LONG_MIN_BEFORE, N - Math.min(LONG_MAX_AFTER, this.cap - LONG_RING_MARGIN));
    const hi = N - LONG_MIN_AFTER;
    if (hi < lo) return null;
    // Running sums of the values, winsorised at clip sd around the baseline
    // (unweighted: a calm series' counts hardly vary), walking the long
    // history and then the ring without a division per point.
    const ringFrom = this.nv - this.cap;
    const sd = this.noiseSd(0, now);
    const lim = this.opts.clip * sd;
    const low = s.level - lim;
    const high = s.level + lim;
    const cx = scratch(9, N + 1);
    cx[0] = 0;
    let i = 0;
    let acc = 0;
    const y0 = this.ry[0];
    const z0 = this.rz[0];
    const su = this.sigmaU;
    for (let v = from, q = from % this.longCap; v < ringFrom; v++, i++) {
      const y = this.ly[q]! * 1e-6;
      acc += y < low ? low : y > high ? high : y;
      cx[i + 1] = acc;
      if (++q === this.longCap) q = 0;
    }
    for (let v = Math.max(from, ringFrom), q = v % this.cap; v <= now; v++, i++) {
      const y = y0[q]! + su * z0[q]!;
      acc += y < low ? low : y > high ? high : y;
      cx[i + 1] = acc;
      if (++q === this.cap) q = 0;
    }
    let best = -1;
    let bestK = -1;
    let bestDiff = 0;
    for (let k = lo; k <= hi; k++) {
      const diff = (acc - cx[k]!) / (N - k) - cx[k]! / k;
      const v = (diff * diff * k * (N - k)) / N;
      if (v > best) {
        best = v;
        bestK = k;
        bestDiff = diff;
      }
    }
    // (The rank tests must reach p ≈ 2e-9 after their penalties, about 6 sd:
    // a split whose z is under LONG_SCREEN is not worth them.)
    if (bestK < 0 || Math.abs(bestDiff) < this.logMin || best < LONG_SCREEN * LONG_SCREEN * sd * sd)
      return null;
    const ys = scratch(1, N);
    const ts = scratch(3, N);
    const t0 = this.historyT(from);
    for (let j = 0; j < N; j++) {
      ys[j] = this.historyY(from + j);
      ts[j] = (this.historyT(from + j) - t0) / 60_000;
    }
    const dir = bestDiff > 0 ? 1 : -1;
    const r = this.unshiftedTest(dir, ys.subarray(bestK), ys.subarray(0, bestK), ts);
    const p = Math.min(1, r.p * LONG_PENALTY);
    if (!(p < this.opts.alpha)) return null;
    const split = from + bestK;
    const test: SplitTest = { p, tail: false, theta: 0, onset: split };
    const { split: at, unc } = this.localise(0, dir, test, now, -Infinity, true);
    return this.report(0, dir, at, now, unc, p);
  }

  /** Corrected log p50 of valid index v: from the ring, or from the long history before it. */
  private historyY(v: number): number {
    return v < this.nv - this.cap ? this.ly[v % this.longCap]! * 1e-6 : this.y(0, v % this.cap);
  }

  /** Time (ms) of valid index v: from the ring, or (whole minutes) from the long history before it. */
  private historyT(v: number): number {
    return v < this.nv - this.cap ? this.lt[v % this.longCap]! * 60_000 : this.rt[v % this.cap]!;
  }

  /**
   * New extremes: a slow tail that shows in only some minutes of a sparse
   * series (a minute's "p99" of 3 events is their maximum, so a slower 5% of
   * events shows in ~15% of the minutes) moves neither the level nor, within
   * a 120-point history, any rank test far enough. Against a long history
   * (up to XB blocks of XBLK points, kept as each block's top two values)
   * a handful of minutes beyond its second largest value is significant: the
   * number of m new points above the r-th largest of N exchangeable ones has
   * the Gumbel-von Schelling distribution. The threshold (the history's
   * second largest value plus XMARGIN, ×4: beyond what spikes and heavy tails
   * did) is frozen from the first exceedance on; every new exceedance tests each
   * earlier one as the onset, Bonferroni over onsets and rounds.
   */
  private extremes(mi: number, vi: number, y: number): StepChange | null {
    const s = this.ms[mi]!;
    const o = this.opts;
    if (s.warm < o.warmupPoints) return null;
    // Drop what belongs to an earlier regime.
    if (s.cs < s.regimeStart) {
      s.cs = vi;
      s.cn = 0;
      s.c1 = s.c2 = -NO_THRESHOLD;
    }
    while (s.xs.length && s.xs[0]! < s.regimeStart) {
      s.xs.shift();
      s.xn.shift();
      s.x1.shift();
      s.x2.shift();
      s.xt = NO_THRESHOLD;
    }
    while (s.xe.length && (s.xe[0]! < s.regimeStart || s.xe[0]! <= vi - XW)) s.xe.shift();
    if (!s.xe.length) s.xk = 0;
    let out: StepChange | null = null;
    if (s.xt !== NO_THRESHOLD && y > s.xt && s.xN >= XMINN) {
      s.xe.push(vi);
      if (s.xe.length >= XMINX && this.noiseSd(mi, vi) >= XSD) out = this.testExtremes(mi, vi);
    }
    if (out) return out;
    // The open block.
    if (y > s.c1) {
      s.c2 = s.c1;
      s.c1 = y;
    } else if (y > s.c2) s.c2 = y;
    if (++s.cn >= XBLK) {
      s.xs.push(s.cs);
      s.xn.push(s.cn);
      s.x1.push(round6(s.c1));
      s.x2.push(round6(s.c2));
      if (s.xs.length > XB) {
        s.xs.shift();
        s.xn.shift();
        s.x1.shift();
        s.x2.shift();
      }
      s.cs = vi + 1;
      s.cn = 0;
      s.c1 = s.c2 = -NO_THRESHOLD;
      if (!s.xe.length) this.extremeThreshold(s);
    }
    return null;
  }

  /** The second largest value of the closed blocks (plus the margin) and their size. */
  private extremeThreshold(s: MetricState): void {
    let n = 0;
    let t1 = -NO_THRESHOLD;
    let t2 = -NO_THRESHOLD;
    for (let b = 0; b < s.xs.length; b++) {
      n += s.xn[b]!;
      const v1 = s.x1[b]!;
      const v2 = s.x2[b]!;
      if (v1 > t1) {
        t2 = Math.max(t1, v2);
        t1 = v1;
      } else if (v1 > t2) t2 = v1;
    }
    s.xN = n;
    s.xt = n < XMINN ? NO_THRESHOLD : t2 + Math.max(this.logMin, XMARGIN);
  }

  private testExtremes(mi: number, now: number): StepChange | null {
    const s = this.ms[mi]!;
    const e = s.xe;
    const K = e.length;
    s.xk++;
    let best = 1;
    let bestJ = -1;
    let bestQ = 0;
    for (let k = 0; k <= K - XMINX; k++) {
      const j = e[k]!;
      // Points after the candidate onset and exceedances among them (the onset's own is the condition).
      const m = now - j;
      const x = K - 1 - k;
      if (m < 1 || x < XMINX - 1) continue;
      const p = gvsUpper(s.xN, 2, m, x);
      if (p < best) {
        best = p;
        bestJ = j;
        bestQ = (x + 1) / (m + 1);
      }
    }
    const p = Math.min(1, best * K * s.xk);
    if (!(p < this.opts.alpha) || bestJ < 0) return null;
    // The first exceedance comes a geometric wait after the step (a share q
    // of the new minutes exceed): the onset's posterior (flat prior) decays
    // from it backwards as (1 - q)^d; report its median, and the 95% width.
    const lq = Math.log(1 - Math.min(0.9, Math.max(0.02, bestQ)));
    const back = Math.max(0, Math.ceil(Math.log(0.5) / lq) - 1);
    const unc = Math.ceil(Math.log(0.05) / lq);
    const prev = previousExceedance(s, bestJ);
    const split = Math.max(bestJ - back, prev + 1, s.regimeStart + MIN_BEFORE, now - this.cap + 2);
    s.xe = [];
    s.xk = 0;
    return this.report(mi, 1, split, now, unc, p);
  }

  /** Robust Holt update of the baseline with point j (valid index). */
  private feedBaseline(s: MetricState, mi: number, j: number): void {
    const pj = j % this.cap;
    const tj = this.rt[pj]!;
    const f = s.level + s.slope * Math.max(0, (tj - s.lastT) / 60_000);
    const sd = Math.sqrt(s.tau2 + s.a / this.rc[pj]! + this.q2);
    let e = this.y(mi, pj) - f;
    const lim = this.opts.clip * sd;
    if (e > lim) e = lim;
    else if (e < -lim) e = -lim;
    s.level = f + HOLT_ALPHA * e;
    s.slope += HOLT_ALPHA * HOLT_BETA * e;
    if (s.slope > MAX_SLOPE) s.slope = MAX_SLOPE;
    else if (s.slope < -MAX_SLOPE) s.slope = -MAX_SLOPE;
    s.lastT = tj;
  }

  /** Log-likelihood-ratio increments of the tail-share CUSUMs for base rate p0 (up: ×3 or +0.1, down: ÷4). */
  private tailIncrements(s: MetricState, p0: number): void {
    const p1u = Math.min(0.9, Math.max(3 * p0, p0 + 0.1));
    const p1d = p0 / 4;
    s.p0 = p0;
    s.lu1 = Math.log(p1u / p0);
    s.lu0 = Math.log((1 - p1u) / (1 - p0));
    s.ld1 = Math.log(p1d / p0);
    s.ld0 = Math.log((1 - p1d) / (1 - p0));
  }

  /** The regime's upper quantile over its last TAIL_WINDOW points, plus the reporting margin. */
  private refreshThreshold(mi: number, vi: number): void {
    const s = this.ms[mi]!;
    const from = Math.max(s.regimeStart, vi - TAIL_WINDOW, vi - this.cap + 1);
    const ys = this.rangeY(mi, from, vi - 1, 0);
    s.thr =
      select(ys, Math.min(ys.length - 1, Math.floor(TAIL_QUANTILE * ys.length))) + this.logMin;
    s.thrAt = vi;
  }

  private solveNoise(s: MetricState): void {
    const mu = s.su / s.w;
    const md = s.sd / s.w;
    const varU = s.suu / s.w - mu * mu;
    const q2x2 = 2 * this.q2;
    let a: number;
    let tau2: number;
    if (varU > 0.05 * mu * mu) {
      // E[d²] = 2τ² + A·u (+ resolution): ordinary least squares in the decayed sums.
      a = (s.sud / s.w - mu * md) / varU;
      tau2 = (md - q2x2 - a * mu) / 2;
      if (a < 0) {
        a = 0;
        tau2 = (md - q2x2) / 2;
      } else if (tau2 < 0) {
        tau2 = 0;
        a = (md - q2x2) / mu;
      }
    } else {
      // Counts barely vary: attribute the noise to sampling (conservative when counts later drop).
      tau2 = 0;
      a = (md - q2x2) / mu;
    }
    s.a = a > 0 ? a : 0;
    s.tau2 = tau2 > 0 ? tau2 : 0;
  }

  /** Start a regime on points [from, to] (valid indices) already in the ring. */
  private initRegime(mi: number, from: number, to: number, keepSlope: number): void {
    const s = this.ms[mi]!;
    s.level = medianOf(this.rangeY(mi, from, to, 1));
    s.slope = keepSlope;
    s.lastT = this.rt[to % this.cap]!;
    s.fed = to;
    s.regimeStart = from;
    s.up = s.dn = s.us = s.ds = 0;
    s.upStart = s.dnStart = s.usStart = s.dsStart = to + 1;
    s.eu = s.ed = 0;
    s.euStart = s.edStart = to + 1;
    s.thr = NO_THRESHOLD;
    s.thrAt = NEVER;
    s.alarm = 0;
    if (s.w === 0 && to > from) {
      // First regime: seed the noise model from the median absolute first difference.
      const ad: number[] = [];
      let su = 0;
      for (let v = from + 1; v <= to; v++) {
        const p = v % this.cap;
        const q = (v - 1) % this.cap;
        ad.push(Math.abs(this.y(mi, p) - this.y(mi, q)));
        su += 1 / this.rc[p]! + 1 / this.rc[q]!;
      }
      const n = ad.length;
      const sdD = median(ad) / 0.6745; // sd of a difference
      const mu = su / n;
      const d2 = Math.max(sdD * sdD, 2 * this.q2);
      s.w = n;
      s.su = n * mu;
      s.suu = n * mu * mu;
      s.sd = n * d2;
      s.sud = n * mu * d2;
      this.solveNoise(s);
    } else {
      // Later regimes: keep the noise model but let the new level's data take over quickly.
      const shrink = 0.25;
      s.w *= shrink;
      s.su *= shrink;
      s.suu *= shrink;
      s.sd *= shrink;
      s.sud *= shrink;
    }
  }

  // ---- confirmation ---------------------------------------------------

  /**
   * The value the detector works on for ring position `pos`: log(q + floor),
   * corrected to the level it estimates. A minute's "p99" of n events is the
   * rank-ceil(0.99n) value: for small n it sits well below the true p99 (the
   * max of 5 events is near the 83rd percentile), so raw p99 dips whenever
   * traffic does (every night). Both quantiles are moved to the level they
   * estimate, σ·(Φ⁻¹(q) - Φ⁻¹(k/(n+1))), with σ the learnt spread.
   */
  private y(mi: number, pos: number): number {
    return this.ry[mi]![pos]! + this.sigmaU * this.rz[mi]![pos]!;
  }

  private rangeY(mi: number, from: number, to: number, slot: number): Float64Array {
    const out = scratch(slot, Math.max(0, to - from + 1));
    for (let v = from; v <= to; v++) out[v - from] = this.y(mi, v % this.cap);
    return out;
  }

  private rangeRaw(mi: number, from: number, to: number, slot: number): Float64Array {
    const out = scratch(slot, Math.max(0, to - from + 1));
    const r = this.ry[mi]!;
    for (let v = from; v <= to; v++) out[v - from] = r[v % this.cap]!;
    return out;
  }

  private rangeT(from: number, to: number, slot: number): Float64Array {
    const out = scratch(slot, Math.max(0, to - from + 1));
    for (let v = from; v <= to; v++)
      out[v - from] = (this.rt[v % this.cap]! - this.rt[from % this.cap]!) / 60_000;
    return out;
  }

  /**
   * Test a split for a step in direction `dir` on metric `mi`: the points
   * [onset, now] against up to `beforePoints` points before `onset`.
   * p is NaN when the split is not testable.
   */
  private testSplit(
    mi: number,
    dir: number,
    onset: number,
    now: number,
    detrend: boolean,
  ): SplitTest {
    const s = this.ms[mi]!;
    const from = Math.max(s.regimeStart, onset - this.opts.beforePoints, now - this.cap + 1);
    const nB = onset - from;
    const nA = now - onset + 1;
    if (nB < MIN_BEFORE || nA < MIN_AFTER) return { p: NaN, tail: false, theta: 0, onset };
    const yB = this.rangeY(mi, from, onset - 1, 1);
    const yA = this.rangeY(mi, onset, now, 2);
    // H0: the after points exceed the before points by at most minRatio.
    // Shifting the after side by that margin makes the tests reject only
    // steps of at least minRatio.
    const shift = dir * this.logMin;
    const yAs = scratch(12, nA);
    for (let i = 0; i < nA; i++) yAs[i] = yA[i]! - shift;
    const raw = this.rankTests(dir, yAs, yB);
    const out: SplitTest = { p: raw.p, tail: raw.tail, theta: raw.theta + shift, onset };
    let tAll: Float64Array | null = null;
    if (detrend && nB >= 20 && raw.p < this.opts.alpha) {
      // A ramp (diurnal) must not pass for a step: the shift must survive
      // removing the robust trend of the history, extrapolated forwards.
      tAll = this.rangeT(from, now, 3);
      const { slope, intercept } = robustTrend(tAll.subarray(0, nB), yB);
      const rB = scratch(6, nB);
      const rA = scratch(7, nA);
      for (let i = 0; i < nB; i++) rB[i] = yB[i]! - (intercept + slope * tAll[i]!);
      for (let i = 0; i < nA; i++) rA[i] = yA[i]! - (intercept + shift + slope * tAll[nB + i]!);
      out.p = Math.max(out.p, this.rankTests(dir, rA, rB).p);
    }
    // (Only worth trying when the margin test already leans that way: for a
    // step the unshifted test can confirm, the margin test's p is < 0.05.)
    if (
      out.p >= this.opts.alpha &&
      raw.p < NM_GATE &&
      nB >= 20 &&
      nA >= NM_MIN_AFTER &&
      this.noiseSd(mi, now) >= NM_SD &&
      dir * (medianOf(yA) - medianOf(yB)) >= this.logMin
    ) {
      tAll ??= this.rangeT(from, now, 3);
      const nm = this.unshiftedTest(dir, yA, yB, tAll);
      if (nm.p < out.p) {
        out.p = nm.p;
        out.tail = nm.tail;
        out.theta = nm.theta;
      }
    }
    return out;
  }

  /**
   * The slow path for small steps in noisy (sparse) series: the margin test
   * above needs a 1.3× step to clear 1.1× by a p < 1e-5 rank test, which
   * 120 minutes of 3 events each cannot do. Here the step is tested against
   * "no shift" instead (10× the Bonferroni penalty), raw and after removing
   * a trend pooled from both sides (so a diurnal ramp seen on either side is
   * not taken for a step), and both medians must still differ by at least
   * minRatio. Only where a point's noise sd is at least NM_SD: there the
   * minutes are dominated by independent sampling noise, while in dense
   * series slow load drifts would make any unshifted test significant.
   */
  private unshiftedTest(
    dir: number,
    yA: Float64Array,
    yB: Float64Array,
    tAll: Float64Array,
  ): { p: number; tail: boolean; theta: number } {
    const nB = yB.length;
    const nA = yA.length;
    const r0 = this.rankTests(dir, yA, yB);
    if (!(r0.p * NM_PENALTY < this.opts.alpha)) return { p: 1, tail: false, theta: 0 };
    const tB = tAll.subarray(0, nB);
    const tA = tAll.subarray(nB, nB + nA);
    const sB = robustTrend(tB, yB).slope;
    const wB = nB * nB * nB;
    let slope = sB;
    if (nA >= 20) {
      const sA = robustTrend(tA, yA).slope;
      const wA = nA * nA * nA;
      slope = (wB * sB + wA * sA) / (wB + wA);
    }
    const rB = scratch(6, nB);
    const rA = scratch(7, nA);
    for (let i = 0; i < nB; i++) rB[i] = yB[i]! - slope * tB[i]!;
    for (let i = 0; i < nA; i++) rA[i] = yA[i]! - slope * tA[i]!;
    if (!(dir * (medianOf(rA) - medianOf(rB)) >= this.logMin))
      return { p: 1, tail: false, theta: 0 };
    const p1 = this.rankTests(dir, rA, rB).p;
    return { p: Math.min(1, NM_PENALTY * Math.max(r0.p, p1)), tail: r0.tail, theta: r0.theta };
  }

  /**
   * Three tests of "after beyond before", Bonferroni-combined: a rank-sum
   * test (the whole level moved), an exceedance test over the history's
   * upper 15% (a tail that moved in only some minutes, as a sparse p99 does:
   * with 5 events a minute a slow 5% of events shows in a quarter of the
   * minutes) and a third: for regressions over its top 2% (new extremes),
   * for improvements over its top 30% (a tail that showed in many minutes
   * and vanished: a rank sum sees only half of such a step, as the minutes
   * without the tail are unchanged).
   */
  private rankTests(
    dir: number,
    yA: Float64Array,
    yB: Float64Array,
  ): { p: number; tail: boolean; theta: number } {
    const sA = scratch(4, yA.length);
    sA.set(yA);
    sA.sort();
    const sB = scratch(5, yB.length);
    sB.set(yB);
    sB.sort();
    const pmw = dir > 0 ? mannWhitneySorted(sA, sB) : mannWhitneySorted(sB, sA);
    const n = sB.length;
    const r1 = Math.max(1, Math.round(EXCEEDANCE_SHARE * n));
    const pex = exceedanceSorted(sA, sB, r1, dir);
    const r2 = Math.max(1, Math.round((dir > 0 ? TOP_SHARE : VANISHED_SHARE) * n));
    const ptop = exceedanceSorted(sA, sB, r2, dir);
    const p = Math.min(1, 3 * Math.min(pmw, pex, ptop));
    if (pmw <= pex && pmw <= ptop) return { p, tail: false, theta: 0 };
    return { p, tail: true, theta: sB[n - (pex <= ptop ? r1 : r2)]! };
  }

  private tryConfirm(mi: number, now: number): StepChange | null {
    const s = this.ms[mi]!;
    const o = this.opts;
    const dir = s.alarm;
    // The level CUSUM and the tail-share CUSUM may date the onset differently
    // (a sparse tail shows up as scattered slow minutes): try both.
    const tailHalf = TAIL_H / 2;
    const levelHalf = o.cusumH / 2;
    const otherRun =
      s.src !== 1
        ? dir > 0
          ? s.eu > tailHalf
            ? s.euStart
            : -1
          : s.ed > tailHalf
            ? s.edStart
            : -1
        : dir > 0
          ? s.up > levelHalf
            ? s.upStart
            : -1
          : s.dn > levelHalf
            ? s.dnStart
            : -1;
    // A long-pending alarm (a slow drift the baseline stopped following) may
    // have a real step arrive inside it: also try the best split since the
    // alarm's onset.
    const candidates = [s.onset];
    if (otherRun >= 0) candidates.push(Math.max(otherRun, s.regimeStart + MIN_BEFORE));
    if (now - s.onset + 1 >= 12) {
      const inner = this.localise(
        mi,
        dir,
        { p: 0, tail: false, theta: 0, onset: s.onset },
        now,
        s.onset + 1,
      ).split;
      candidates.push(inner);
    }
    let test: SplitTest | null = null;
    let pmin = 1;
    let tried = 0;
    for (const onset of candidates) {
      if (candidates.indexOf(onset) !== tried++) continue; // duplicate
      const t = this.testSplit(mi, dir, onset, now, true);
      const pt = Number.isNaN(t.p) ? 1 : t.p;
      if (!test || pt < pmin) {
        test = t;
        pmin = pt;
      }
    }
    test = test!;
    test.p = Math.min(1, pmin * new Set(candidates).size);
    // Each retest of the same alarm spends more of its error budget.
    s.tests++;
    test.p = Math.min(1, test.p * s.tests);
    const waited = now - s.onset + 1;
    if (!(test.p < o.alpha)) {
      // No sign of a step at all after a while, or waited long enough: drift.
      // Evidence still building (a quiet series' small or tail step): keep waiting up to a full window.
      const promising = test.p < PROMISING_P && waited < o.maxAfterPoints;
      if ((waited >= this.maxWait(mi, now) && !promising) || (test.p > 0.9 && waited >= 24)) {
        // Never confirmed: a drift or a shift too small to report. Re-anchor,
        // keeping the regime's history so later tests still see a full window.
        const regimeStart = s.regimeStart;
        this.initRegime(mi, Math.max(s.onset, now - 9), now, s.slope);
        s.regimeStart = regimeStart;
      } else {
        s.nextTest = now + Math.max(1, Math.floor(waited / RETEST_GROWTH));
      }
      return null;
    }

    const { split, unc } = this.localise(mi, dir, test, now, -Infinity, true);
    return this.report(mi, dir, split, now, unc, test.p);
  }

  /** A confirmed step: the other quantile joins if it moved too, both re-anchor, duplicates are dropped. */
  private report(
    mi: number,
    dir: number,
    split: number,
    now: number,
    unc: number,
    p: number,
  ): StepChange | null {
    const o = this.opts;
    const s = this.ms[mi]!;
    const other = 1 - mi;
    const joined =
      this.ms[other]!.warm >= o.warmupPoints &&
      this.testSplit(other, dir, split, now, false).p < JOIN_ALPHA;

    // Re-anchor the quantile(s) that moved at the new level.
    this.initRegime(mi, split, now, s.slope);
    if (joined) this.initRegime(other, split, now, this.ms[other]!.slope);

    // The other quantile may already have reported this very step.
    for (const r of this.recent) {
      if (r.dir === dir && Math.abs(r.onset - split) <= 5 + Math.max(r.unc, unc)) return null;
    }
    this.recent.push({ onset: split, dir, unc });
    if (this.recent.length > 4) this.recent.shift();
    return this.describe(mi, dir, split, now, unc, p, joined);
  }

  /** The noise model's per-point sd at the count of point `now`. */
  private noiseSd(mi: number, now: number): number {
    const s = this.ms[mi]!;
    const c = this.rc[now % this.cap]!;
    return Math.sqrt(s.tau2 + s.a / c + this.q2);
  }

  /**
   * How long an alarm may wait for confirmation: about the points a rank test
   * needs to see a minRatio step through this series' noise. A quiet series
   * (thousands of events a minute) confirms a real step within a few points,
   * so a long wait there would only let a slow drift accumulate into a "step".
   */
  private maxWait(mi: number, now: number): number {
    const s = this.ms[mi]!;
    const c = this.rc[now % this.cap]!;
    const sd = Math.sqrt(s.tau2 + s.a / c + this.q2);
    const r = (5 * sd) / Math.max(this.logMin, 1e-3);
    return Math.min(this.opts.maxAfterPoints, Math.max(12, Math.round(8 + 2 * r * r)));
  }

  /**
   * Maximum-likelihood split over the testable window, with the model of the
   * test that confirmed the step: a mean shift (on values winsorised around
   * the two provisional levels and weighted by the noise model, so a minute
   * with 2 events counts less than one with 2,000), or a change in the share
   * of points beyond the exceedance threshold (Bernoulli). The onset
   * interval holds the splits within ONSET_LR_DROP of the best 2·log-LR.
   * For the reported onset (`posteriorMedian`), the posterior median of the
   * split replaces the maximum.
   */
  private localise(
    mi: number,
    dir: number,
    test: SplitTest,
    now: number,
    lowest = -Infinity,
    posteriorMedian = false,
  ): { split: number; unc: number } {
    const s = this.ms[mi]!;
    const onset = test.onset;
    const from = Math.max(s.regimeStart, onset - this.opts.beforePoints, now - this.cap + 1);
    const N = now - from + 1;
    const ys = this.rangeY(mi, from, now, 1);
    const nB = onset - from;
    const cw = scratch(8, N + 1);
    const cx = scratch(9, N + 1);
    cw[0] = 0;
    cx[0] = 0;
    if (test.tail) {
      for (let i = 0; i < N; i++) {
        const b = dir > 0 ? ys[i]! > test.theta : ys[i]! >= test.theta;
        cw[i + 1] = i + 1;
        cx[i + 1] = cx[i]! + (b ? 1 : 0);
      }
    } else {
      const mB = medianOf(ys.subarray(0, nB));
      const mA = medianOf(ys.subarray(nB));
      const lo = Math.min(mB, mA);
      const hi = Math.max(mB, mA);
      const cl = this.opts.clip;
      for (let i = 0; i < N; i++) {
        const c = this.rc[(from + i) % this.cap]!;
        const v2 = s.tau2 + s.a / c + this.q2;
        const sd = Math.sqrt(v2);
        let x = ys[i]!;
        if (x < lo - cl * sd) x = lo - cl * sd;
        else if (x > hi + cl * sd) x = hi + cl * sd;
        const w = 1 / v2;
        cw[i + 1] = cw[i]! + w;
        cx[i + 1] = cx[i]! + w * x;
      }
    }
    const W = cw[N]!;
    const X = cx[N]!;
    const bern = (x: number, n: number) =>
      x > 0 && x < n ? x * Math.log(x / n) + (n - x) * Math.log(1 - x / n) : 0;
    const whole = test.tail ? bern(X, W) : 0;
    // Candidate splits: keep a few points on the left, and at least MIN_AFTER on the right.
    const first = Math.max(4, nB - 30, lowest - from);
    const last = N - MIN_AFTER;
    const lr = scratch(10, Math.max(0, last - first + 1));
    let best = -Infinity;
    let bestK = nB;
    for (let k = first; k <= last; k++) {
      const w1 = cw[k]!;
      const w2 = W - w1;
      const m1 = cx[k]! / w1;
      const m2 = (X - cx[k]!) / w2;
      const diff = m2 - m1;
      let v = 0;
      // Only shifts in the alarm's direction count.
      if (dir * diff > 0)
        v = test.tail
          ? 2 * (bern(cx[k]!, w1) + bern(X - cx[k]!, w2) - whole)
          : (diff * diff * w1 * w2) / W;
      lr[k - first] = v;
      if (v > best) {
        best = v;
        bestK = k;
      }
    }
    if (posteriorMedian) {
      // The onset reported is the posterior median of the split (flat prior,
      // exp(lr / 2) its likelihood ratio) rather than its mode: the same for
      // a symmetric profile, and nearer on average for a skewed one, as when
      // a sparse tail first shows a geometric wait after the step.
      let tot = 0;
      for (let k = first; k <= last; k++) tot += Math.exp((lr[k - first]! - best) / 2);
      let acc = 0;
      for (let k = first; k <= last; k++) {
        acc += Math.exp((lr[k - first]! - best) / 2);
        if (acc >= tot / 2) {
          bestK = k;
          break;
        }
      }
    }
    let unc = 0;
    for (let k = first; k <= last; k++) {
      if (lr[k - first]! >= best - ONSET_LR_DROP) unc = Math.max(unc, Math.abs(k - bestK));
    }
    return { split: from + bestK, unc };
  }

  private describe(
    mi: number,
    dir: number,
    split: number,
    now: number,
    unc: number,
    p: number,
    joined: boolean,
  ): StepChange {
    const o = this.opts;
    const beforeFrom = Math.max(
      split - o.beforePoints,
      now - this.cap + 1,
      this.prevRegimeFloor(split),
    );
    const before = this.summarise(beforeFrom, split - 1);
    const after = this.summarise(split, now);
    const ratios = {
      p50: this.ratio(before.p50, after.p50),
      p99: this.ratio(before.p99, after.p99),
    };
    const metric = METRICS[mi]!;
    const metrics: StepMetric[] = joined ? ['p50', 'p99'] : [metric];
    // Report the quantile that moved most, when both did.
    let chosen = metric;
    if (joined)
      chosen = Math.abs(Math.log(ratios.p50)) >= Math.abs(Math.log(ratios.p99)) ? 'p50' : 'p99';
    const sp = split % this.cap;
    const np = now % this.cap;
    return {
      index: this.rg[sp]!,
      t: this.rt[sp]!,
      metric: chosen,
      metrics,
      direction: dir > 0 ? 'regression' : 'improvement',
      before,
      after,
      ratio: ratios[chosen],
      ratios,
      confidence: 1 - p,
      onsetUncertaintyPoints: unc,
      detectedIndex: this.rg[np]!,
      detectedT: this.rt[np]!,
    };
  }

  /** The "before" window should not reach back past the previous change of either quantile. */
  private prevRegimeFloor(split: number): number {
    let f = 0;
    for (const r of this.recent) if (r.onset < split) f = Math.max(f, r.onset);
    return f;
  }

  private summarise(from: number, to: number): LevelSummary {
    let count = 0;
    for (let v = from; v <= to; v++) count += this.rc[v % this.cap]!;
    const floor = this.opts.floor;
    return {
      p50: Math.max(0, Math.exp(medianOf(this.rangeRaw(0, from, to, 1))) - floor),
      p99: Math.max(0, Math.exp(medianOf(this.rangeRaw(1, from, to, 1))) - floor),
      count,
      points: Math.max(0, to - from + 1),
    };
  }

  private ratio(before: number, after: number): number {
    if (before > 0) return after / before;
    const f = this.opts.floor;
    return (after + f) / (before + f);
  }

  // ---- state ----------------------------------------------------------

  toJSON(): DetectorStateJSON {
    const size = Math.min(this.nv, this.cap);
    const ring = {
      t: [] as number[],
      c: [] as number[],
      g: [] as number[],
      y50: [] as number[],
      y99: [] as number[],
    };
    for (let v = this.nv - size; v < this.nv; v++) {
      const p = v % this.cap;
      ring.t.push(this.rt[p]!);
      ring.c.push(this.rc[p]!);
      ring.g.push(this.rg[p]!);
      ring.y50.push(this.ry[0][p]!);
      ring.y99.push(this.ry[1][p]!);
    }
    const kept = Math.min(Math.max(0, this.nv - this.cap - this.longFrom), this.longCap);
    const long = { t: [] as number[], y: [] as number[] };
    let prev = 0;
    for (let v = this.nv - this.cap - kept; v < this.nv - this.cap; v++) {
      const q = v % this.longCap;
      // Minutes as differences from the previous point (mostly 1): a short JSON.
      long.t.push(long.t.length ? this.lt[q]! - prev : this.lt[q]!);
      prev = this.lt[q]!;
      long.y.push(this.ly[q]!);
    }
    return {
      v: 1,
      opts: { ...this.opts },
      n: this.n,
      nv: this.nv,
      lastT: Number.isFinite(this.lastT) ? this.lastT : null,
      ring,
      long,
      spread: [this.sxz, this.szz, this.sigmaU],
      metrics: this.ms.map(copyMetricState),
      recent: this.recent.map((r) => ({ ...r })),
    };
  }

  static fromJSON(state: DetectorStateJSON): StepDetector {
    if (!state || state.v !== 1) throw new Error('unsupported detector state');
    const d = new StepDetector(state.opts);
    d.n = state.n;
    d.nv = state.nv;
    d.lastT = state.lastT ?? -Infinity;
    const size = state.ring.t.length;
    for (let i = 0; i < size; i++) {
      const p = (state.nv - size + i) % d.cap;
      d.rt[p] = state.ring.t[i]!;
      d.rc[p] = state.ring.c[i]!;
      d.rz[0][p] = -zAt(0, d.rc[p]!);
      d.rz[1][p] = Z99 - zAt(1, d.rc[p]!);
      d.rg[p] = state.ring.g[i]!;
      d.ry[0][p] = state.ring.y50[i]!;
      d.ry[1][p] = state.ring.y99[i]!;
    }
    const long = state.long;
    // What the state did not keep is not history: the scan starts after it.
    d.longFrom = Math.max(0, state.nv - size - Math.min(long?.t.length ?? 0, d.longCap));
    if (long && d.longCap > 0) {
      let minute = 0;
      for (let i = 0; i < long.t.length; i++) {
        minute = i ? minute + long.t[i]! : long.t[i]!;
        const v = state.nv - size - long.t.length + i;
        if (v < 0 || i < long.t.length - d.longCap) continue;
        d.lt[v % d.longCap] = minute;
        d.ly[v % d.longCap] = long.y[i]!;
      }
    }
    [d.sxz, d.szz, d.sigmaU] = state.spread;
    for (let mi = 0; mi < 2; mi++)
      Object.assign(d.ms[mi]!, copyMetricState({ ...newMetricState(), ...state.metrics[mi]! }));
    d.recent = state.recent.map((r) => ({ ...r }));
    return d;
  }
}
