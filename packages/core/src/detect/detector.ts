/**
 * Online step-change detector for one series (see docs/detection.md).
 *
 * Per quantile (p50, p99), on y = log(value + floor):
 *  1. a robust Holt baseline (level + slope, so diurnal ramps do not lag)
 *     forecasts each point;
 *  2. the residual is standardised by a count-aware noise model
 *     σ² = τ² + A/count + resolution², fitted online from first differences
 *     (so level shifts and drifts do not inflate it), and clipped;
 *  3. a two-sided CUSUM of the clipped scores raises an alarm, with the start
 *     of its run as the provisional onset;
 *  4. the alarm is confirmed by a one-sided Mann-Whitney test of the points
 *     since the onset against up to `beforePoints` earlier points, twice: on
 *     the raw values and after removing the robust trend of the history, and
 *     the shift must exceed `minRatio` both ways (a ramp is not a step);
 *  5. the onset is then localised by a maximum-likelihood split on
 *     winsorised, precision-weighted values, with its uncertainty interval.
 * An unconfirmed alarm is retested as points arrive and written off (the
 * baseline re-anchored) after `maxAfterPoints`.
 *
 * Work per point is O(1); tests run only on alarms. State is a few numbers
 * per quantile plus a ring of the last beforePoints+maxAfterPoints points, and
 * round-trips through JSON, so a pass only processes new points.
 */
import { mannWhitneyGreater, median, robustTrend } from './stats.ts';
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
/** Baseline smoothing (Holt): level gain and slope gain. */
const HOLT_ALPHA = 0.1;
const HOLT_BETA = 0.05;
/** Largest believable drift of the baseline, log units per minute (~×1.35 per hour). */
const MAX_SLOPE = 0.005;
/** Noise model memory (points). */
const NOISE_MEMORY = 128;
/** Fewest points on each side of a split that a confirmation accepts. */
const MIN_BEFORE = 8;
const MIN_AFTER = 3;
/** Significance for a second quantile to join a change confirmed on the first. */
const JOIN_ALPHA = 1e-3;
/** Onset interval: splits whose log-likelihood ratio is within this of the best (≈95%). */
const ONSET_LR_DROP = 4;

interface MetricState {
  warm: number;
  level: number;
  slope: number;
  lastT: number;
  // Noise model: decayed sums for the regression of squared first differences on 1/count.
  w: number;
  su: number;
  suu: number;
  sd: number;
  sud: number;
  a: number;
  tau2: number;
  // Two-sided CUSUM and the start of each run (valid-point index).
  up: number;
  dn: number;
  upStart: number;
  dnStart: number;
  // Pending alarm: direction (0 none), onset and next test (valid-point indices).
  alarm: number;
  onset: number;
  nextTest: number;
  regimeStart: number;
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
  metrics: MetricState[];
  recent: RecentChange[];
}

const NONE: StepChange[] = [];

function newMetricState(): MetricState {
  return {
    warm: 0, level: 0, slope: 0, lastT: 0,
    w: 0, su: 0, suu: 0, sd: 0, sud: 0, a: 0, tau2: 0,
    up: 0, dn: 0, upStart: 0, dnStart: 0,
    alarm: 0, onset: 0, nextTest: 0, regimeStart: 0,
  };
}

export class StepDetector {
  readonly opts: ResolvedDetectOptions;
  private n = 0;
  private nv = 0;
  private lastT = -Infinity;
  private readonly cap: number;
  private readonly rt: Float64Array;
  private readonly rc: Float64Array;
  private readonly rg: Float64Array;
  private readonly ry: [Float64Array, Float64Array];
  private readonly ms: [MetricState, MetricState];
  private recent: RecentChange[] = [];
  private readonly logMin: number;
  private readonly q2: number;

  constructor(opts: DetectOptions = {}) {
    this.opts = resolveDetectOptions(opts);
    this.cap = this.opts.beforePoints + this.opts.maxAfterPoints + 4;
    this.rt = new Float64Array(this.cap);
    this.rc = new Float64Array(this.cap);
    this.rg = new Float64Array(this.cap);
    this.ry = [new Float64Array(this.cap), new Float64Array(this.cap)];
    this.ms = [newMetricState(), newMetricState()];
    this.logMin = Math.log(this.opts.minRatio);
    this.q2 = this.opts.resolution * this.opts.resolution;
  }

  /** Points pushed so far (the index the next point gets). */
  get pointsSeen(): number {
    return this.n;
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
    this.rt[pos] = p.t;
    this.rc[pos] = c;
    this.rg[pos] = g;
    this.ry[0][pos] = Math.log(v50);
    this.ry[1][pos] = Math.log(v99);
    let out: StepChange[] = NONE;
    for (let mi = 0; mi < 2; mi++) {
      const ch = this.stepMetric(mi, vi);
      if (ch) out = out === NONE ? [ch] : [...out, ch];
    }
    return out;
  }

  // ---- per-point work -------------------------------------------------

  private stepMetric(mi: number, vi: number): StepChange | null {
    const s = this.ms[mi]!;
    const o = this.opts;
    const pos = vi % this.cap;
    const y = this.ry[mi]![pos]!;
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
    const d = y - this.ry[mi]![pp]!;
    const u = 1 / c + 1 / this.rc[pp]!;
    const pred = 2 * s.tau2 + s.a * u + 2 * this.q2;
    const d2 = Math.min(d * d, 9 * pred);
    const rho = 1 - 1 / NOISE_MEMORY;
    s.w = rho * s.w + 1;
    s.su = rho * s.su + u;
    s.suu = rho * s.suu + u * u;
    s.sd = rho * s.sd + d2;
    s.sud = rho * s.sud + u * d2;
    this.solveNoise(s);

    // Forecast, standardise, clip, CUSUM.
    const dt = Math.max(1, (t - s.lastT) / 60_000);
    const f = s.level + s.slope * dt;
    const sigma = Math.sqrt(s.tau2 + s.a / c + this.q2);
    const e = y - f;
    const cl = o.clip;
    let z = e / sigma;
    if (z > cl) z = cl;
    else if (z < -cl) z = -cl;
    const k = o.cusumK;
    if (s.up === 0) s.upStart = vi;
    s.up = Math.max(0, s.up + z - k);
    if (s.dn === 0) s.dnStart = vi;
    s.dn = Math.max(0, s.dn - z - k);

    // Baseline: follow the trend, but learn only while nothing is brewing.
    const h = o.cusumH;
    if (s.up < h / 2 && s.dn < h / 2) {
      let ec = e;
      const lim = cl * sigma;
      if (ec > lim) ec = lim;
      else if (ec < -lim) ec = -lim;
      s.level = f + HOLT_ALPHA * ec;
      s.slope += HOLT_ALPHA * HOLT_BETA * ec;
      if (s.slope > MAX_SLOPE) s.slope = MAX_SLOPE;
      else if (s.slope < -MAX_SLOPE) s.slope = -MAX_SLOPE;
    } else {
      s.level = f;
    }
    s.lastT = t;

    // Alarm bookkeeping.
    if (s.alarm !== 0) {
      if ((s.alarm > 0 ? s.up : s.dn) === 0) s.alarm = 0; // it was a blip
    }
    if (s.alarm === 0 && (s.up > h || s.dn > h)) {
      s.alarm = s.up > h ? 1 : -1;
      s.onset = Math.max(s.alarm > 0 ? s.upStart : s.dnStart, s.regimeStart + MIN_BEFORE);
      s.nextTest = vi;
    }
    if (s.alarm !== 0 && vi >= s.nextTest) return this.tryConfirm(mi, vi);
    return null;
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
    const ys = this.rangeY(mi, from, to);
    s.level = median(ys);
    s.slope = keepSlope;
    s.lastT = this.rt[to % this.cap]!;
    s.regimeStart = from;
    s.up = s.dn = 0;
    s.upStart = s.dnStart = to + 1;
    s.alarm = 0;
    if (s.w === 0 && to > from) {
      // First regime: seed the noise model from the median absolute first difference.
      const ad: number[] = [];
      let su = 0;
      for (let v = from + 1; v <= to; v++) {
        const p = v % this.cap;
        const q = (v - 1) % this.cap;
        ad.push(Math.abs(this.ry[mi]![p]! - this.ry[mi]![q]!));
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

  private rangeY(mi: number, from: number, to: number): Float64Array {
    const out = new Float64Array(Math.max(0, to - from + 1));
    const r = this.ry[mi]!;
    for (let v = from; v <= to; v++) out[v - from] = r[v % this.cap]!;
    return out;
  }

  private rangeT(from: number, to: number): Float64Array {
    const out = new Float64Array(Math.max(0, to - from + 1));
    for (let v = from; v <= to; v++) out[v - from] = (this.rt[v % this.cap]! - this.rt[from % this.cap]!) / 60_000;
    return out;
  }

  /**
   * Test a split for a step in direction `dir` on metric `mi`: the points
   * [onset, now] against up to `beforePoints` points before `onset`.
   * Returns the p-value (NaN when the split is not testable).
   */
  private testSplit(mi: number, dir: number, onset: number, now: number, alpha: number, detrend: boolean): number {
    const s = this.ms[mi]!;
    const from = Math.max(s.regimeStart, onset - this.opts.beforePoints, now - this.cap + 1);
    const nB = onset - from;
    const nA = now - onset + 1;
    if (nB < MIN_BEFORE || nA < MIN_AFTER) return NaN;
    const yB = this.rangeY(mi, from, onset - 1);
    const yA = this.rangeY(mi, onset, now);
    const delta = median(yA) - median(yB);
    if (dir * delta < this.logMin) return 1;
    let p = dir > 0 ? mannWhitneyGreater(yA, yB) : mannWhitneyGreater(yB, yA);
    if (!(p < alpha)) return p;
    if (detrend && nB >= 20) {
      // A ramp (diurnal) must not pass for a step: the shift must survive
      // removing the robust trend of the history, extrapolated forwards.
      const tAll = this.rangeT(from, now);
      const tB = tAll.subarray(0, nB);
      const { slope, intercept } = robustTrend(tB, yB);
      const rB = new Float64Array(nB);
      const rA = new Float64Array(nA);
      for (let i = 0; i < nB; i++) rB[i] = yB[i]! - (intercept + slope * tAll[i]!);
      for (let i = 0; i < nA; i++) rA[i] = yA[i]! - (intercept + slope * tAll[nB + i]!);
      const dc = median(rA) - median(rB);
      if (dir * dc < this.logMin) return 1;
      const pc = dir > 0 ? mannWhitneyGreater(rA, rB) : mannWhitneyGreater(rB, rA);
      p = Math.max(p, pc);
    }
    return p;
  }

  private tryConfirm(mi: number, now: number): StepChange | null {
    const s = this.ms[mi]!;
    const o = this.opts;
    const dir = s.alarm;
    const p = this.testSplit(mi, dir, s.onset, now, o.alpha, true);
    const waited = now - s.onset + 1;
    if (!(p < o.alpha)) {
      if (waited >= o.maxAfterPoints) {
        // Never confirmed: a drift or a shift too small to report. Re-anchor.
        // Keep the regime's history so later tests still see a full window.
        const regimeStart = s.regimeStart;
        this.initRegime(mi, Math.max(s.onset, now - 9), now, s.slope);
        s.regimeStart = regimeStart;
      } else {
        s.nextTest = now + Math.max(1, Math.floor(waited / 4));
      }
      return null;
    }

    const { split, unc } = this.localise(mi, dir, s.onset, now);
    const other = 1 - mi;
    const joined = this.ms[other]!.warm >= o.warmupPoints && this.testSplit(other, dir, split, now, JOIN_ALPHA, false) < JOIN_ALPHA;

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

  /**
   * Maximum-likelihood split for one mean shift over the testable window,
   * on values winsorised around the two provisional levels and weighted by
   * the noise model (a minute with 2 events counts less than one with 2,000).
   */
  private localise(mi: number, dir: number, onset: number, now: number): { split: number; unc: number } {
    const s = this.ms[mi]!;
    const from = Math.max(s.regimeStart, onset - this.opts.beforePoints, now - this.cap + 1);
    const N = now - from + 1;
    const ys = this.rangeY(mi, from, now);
    const nB = onset - from;
    const mB = median(ys.subarray(0, nB));
    const mA = median(ys.subarray(nB));
    const lo = Math.min(mB, mA);
    const hi = Math.max(mB, mA);
    const cl = this.opts.clip;
    const cw = new Float64Array(N + 1);
    const cx = new Float64Array(N + 1);
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
    const W = cw[N]!;
    const X = cx[N]!;
    // Candidate splits: keep a few points on the left, and at least MIN_AFTER on the right.
    const first = Math.max(4, nB - 30);
    const last = N - MIN_AFTER;
    const lr = new Float64Array(Math.max(0, last - first + 1));
    let best = -Infinity;
    let bestK = nB;
    for (let k = first; k <= last; k++) {
      const w1 = cw[k]!;
      const w2 = W - w1;
      const m1 = cx[k]! / w1;
      const m2 = (X - cx[k]!) / w2;
      const diff = m2 - m1;
      // Only shifts in the alarm's direction count.
      const v = dir * diff > 0 ? ((diff * diff) * w1 * w2) / W : 0;
      lr[k - first] = v;
      if (v > best) {
        best = v;
        bestK = k;
      }
    }
    let unc = 0;
    for (let k = first; k <= last; k++) {
      if (lr[k - first]! >= best - ONSET_LR_DROP) unc = Math.max(unc, Math.abs(k - bestK));
    }
    return { split: from + bestK, unc };
  }

  private describe(mi: number, dir: number, split: number, now: number, unc: number, p: number, joined: boolean): StepChange {
    const o = this.opts;
    const beforeFrom = Math.max(split - o.beforePoints, now - this.cap + 1, this.prevRegimeFloor(split));
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
    if (joined) chosen = Math.abs(Math.log(ratios.p50)) >= Math.abs(Math.log(ratios.p99)) ? 'p50' : 'p99';
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
      p50: Math.max(0, Math.exp(median(this.rangeY(0, from, to))) - floor),
      p99: Math.max(0, Math.exp(median(this.rangeY(1, from, to))) - floor),
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
    const ring = { t: [] as number[], c: [] as number[], g: [] as number[], y50: [] as number[], y99: [] as number[] };
    for (let v = this.nv - size; v < this.nv; v++) {
      const p = v % this.cap;
      ring.t.push(this.rt[p]!);
      ring.c.push(this.rc[p]!);
      ring.g.push(this.rg[p]!);
      ring.y50.push(this.ry[0][p]!);
      ring.y99.push(this.ry[1][p]!);
    }
    return {
      v: 1,
      opts: { ...this.opts },
      n: this.n,
      nv: this.nv,
      lastT: Number.isFinite(this.lastT) ? this.lastT : null,
      ring,
      metrics: this.ms.map((m) => ({ ...m })),
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
      d.rg[p] = state.ring.g[i]!;
      d.ry[0][p] = state.ring.y50[i]!;
      d.ry[1][p] = state.ring.y99[i]!;
    }
    Object.assign(d.ms[0], state.metrics[0]);
    Object.assign(d.ms[1], state.metrics[1]);
    d.recent = state.recent.map((r) => ({ ...r }));
    return d;
  }
}
