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
 *  5b. a run of points each far beyond the forecast (a jump) alarms at
 *     once, dated at its first point, and is tested at every point while
 *     young; a very large, tight step is confirmed on 3 points (jump.ts);
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
 *
 * One concern per file: tuning.ts (fixed constants), ring.ts (the points),
 * model.ts (1-3), split-tests.ts and confirm.ts (4), localise.ts and
 * report.ts (5), jump.ts (5b), extremes.ts and long-scan.ts (6), metric-state.ts and
 * state.ts (the state, readable in memory, compact when stored), codec.ts
 * (its binary form). This class only wires them together.
 */
import { decodeState, encodeState } from './codec.ts';
import type { DetectorContext } from './context.ts';
import { tryConfirm } from './confirm.ts';
import { driftCheck, DRIFT_EVERY } from './drift.ts';
import { extremes } from './extremes.ts';
import { floorCheck, FLOOR_EVERY } from './tail-floor.ts';
import { collapseCheck, COLLAPSE_EVERY } from './tail-collapse.ts';
import { youngCheck } from './young.ts';
import { jumpRun } from './jump.ts';
import { longScan, wander } from './long-scan.ts';
import { newMetricState } from './metric-state.ts';
import { observe } from './model.ts';
import { PointRing } from './ring.ts';
import { stateFromJSON, stateToJSON, type DetectorStateJSON } from './state.ts';
import {
  JUMP_FRESH,
  JUMP_POINTS,
  LONG_BEFORE,
  LONG_EVERY,
  LONG_MAX_AFTER,
  MIN_BEFORE,
  WANDER_BLOCK,
} from './tuning.ts';
import {
  resolveDetectOptions,
  type DetectOptions,
  type MinutePoint,
  type ResolvedDetectOptions,
  type StepChange,
} from './types.ts';

export type { DetectorStateJSON } from './state.ts';

const NONE: StepChange[] = [];

export class StepDetector {
  readonly opts: ResolvedDetectOptions;
  /** Points pushed (with or without data): the index the next one gets. */
  private pushed = 0;
  /** Time of the last point accepted (points must move forward in time). */
  private lastT = -Infinity;
  private readonly d: DetectorContext;

  constructor(opts: DetectOptions = {}) {
    this.opts = resolveDetectOptions(opts);
    const cap = this.opts.beforePoints + this.opts.maxAfterPoints + 4;
    const longCap = Math.max(0, LONG_BEFORE + LONG_MAX_AFTER - cap);
    this.d = {
      opts: this.opts,
      ring: new PointRing(cap, longCap),
      metrics: [newMetricState(), newMetricState()],
      recent: [],
      drift: { dir: 0, start: 0, seen: 0 },
      logMinRatio: Math.log(this.opts.minRatio),
      resolutionVar: this.opts.resolution * this.opts.resolution,
    };
  }

  /** Points pushed so far (the index the next point gets). */
  get pointsSeen(): number {
    return this.pushed;
  }

  /**
   * The points the detector still holds (the last beforePoints +
   * maxAfterPoints with data), oldest first, back in the input unit: what a
   * caller needs to judge recovery without reading the state.
   */
  recentPoints(): MinutePoint[] {
    return this.d.ring.points(this.opts.floor);
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
    const g = this.pushed++;
    const c = p.count;
    if (!(c > 0) || !(p.t > this.lastT)) return NONE;
    const floor = this.opts.floor;
    const v50 = Math.max(p.p50, 0) + floor;
    const v99 = Math.max(p.p99, 0) + floor;
    if (!(v50 > 0 && v99 > 0 && v50 < Infinity && v99 < Infinity)) return NONE;
    this.lastT = p.t;
    const d = this.d;
    const vi = d.ring.append(p.t, c, g, v50, v99);
    let out: StepChange[] = NONE;
    for (let mi = 0; mi < 2; mi++) {
      const ch = this.stepMetric(mi, vi);
      if (ch) out = out === NONE ? [ch] : [...out, ch];
    }
    // (The long scan is for the p50 only, so only the p50's wander is tracked.)
    if (vi % WANDER_BLOCK === WANDER_BLOCK - 1 && vi >= WANDER_BLOCK && d.ring.cap >= WANDER_BLOCK)
      wander(d, vi);
    const m0 = d.metrics[0];
    if (
      out === NONE &&
      vi % LONG_EVERY === 0 &&
      m0.calmVerdicts > 0 &&
      m0.alarm === 0 &&
      m0.warmPoints >= this.opts.warmupPoints
    ) {
      const ch = longScan(d, vi);
      if (ch) out = [ch];
    }
    // Sustained ramps, reported once as drift (drift.ts).
    if (
      out === NONE &&
      vi % DRIFT_EVERY === DRIFT_EVERY - 1 &&
      m0.warmPoints >= this.opts.warmupPoints
    ) {
      const ch = driftCheck(d, vi);
      if (ch) out = [ch];
    }
    // A p99 whose floor rose (tail-floor.ts).
    if (out === NONE && vi % FLOOR_EVERY === FLOOR_EVERY - 1) {
      const ch = floorCheck(d, vi);
      if (ch) out = [ch];
    }
    // A noisy p99 that collapsed onto a steady, higher band (tail-collapse.ts).
    if (out === NONE && vi % COLLAPSE_EVERY === COLLAPSE_EVERY - 9) {
      const ch = collapseCheck(d, vi);
      if (ch) out = [ch];
    }
    return out;
  }

  /** One quantile, one point: the model, then a pending alarm's test, then the new-extremes path. */
  private stepMetric(mi: number, vi: number): StepChange | null {
    const d = this.d;
    const pos = vi % d.ring.cap;
    const y = d.ring.y(mi, pos);
    if (!observe(d, mi, vi, pos, y)) return null;
    const s = d.metrics[mi]!;
    const jump = jumpRun(d, mi, vi);
    if (jump && jump.points >= JUMP_POINTS && jump.points <= JUMP_FRESH) {
      // A young jump: alarm now, dated at its first point, and test at every point.
      if (s.alarm !== jump.dir) {
        s.alarm = jump.dir;
        s.alarmSource = 0;
        s.alarmOnset = Math.max(jump.start, s.regimeStart + MIN_BEFORE);
        s.alarmTests = 0;
      }
      s.nextTest = vi;
    }
    if (s.alarm !== 0 && vi >= s.nextTest) {
      const ch = tryConfirm(d, mi, vi, jump);
      if (ch) return ch;
    }
    // A young series' step, at fixed sizes of its after window (young.ts).
    const young = youngCheck(d, mi, vi);
    if (young) return young;
    return extremes(d, mi, vi, y);
  }

  // ---- state ----------------------------------------------------------

  toJSON(): DetectorStateJSON {
    return stateToJSON(this.d, this.pushed, this.lastT);
  }

  static fromJSON(state: DetectorStateJSON): StepDetector {
    if (!state || state.v !== 1) throw new Error('unsupported detector state');
    const det = new StepDetector(state.opts);
    det.pushed = state.n;
    det.lastT = state.lastT ?? -Infinity;
    stateFromJSON(state, det.d);
    return det;
  }
}
