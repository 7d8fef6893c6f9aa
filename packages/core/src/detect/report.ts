/**
 * A confirmed step becomes a StepChange: the other quantile joins if it
 * moved too, both re-anchor at the new level, a step the other quantile
 * already reported is dropped, and the levels either side are summarised.
 */
import type { DetectorContext } from './context.ts';
import { inDrift, stepAsDrift } from './drift.ts';
import { initRegime, noiseSd } from './model.ts';
import { medianOf } from './scratch.ts';
import { testSplit } from './split-tests.ts';
import { JOIN_ALPHA, TRANSIENT_CLEAR_SD, TRANSIENT_MAX_POINTS, TRANSIENT_TAIL } from './tuning.ts';
import type { LevelSummary, StepChange, StepMetric } from './types.ts';

const METRICS: readonly StepMetric[] = ['p50', 'p99'];

/** Report a step on quantile `mi` at valid index `split`, confirmed at `now` with p-value p (null if a duplicate). */
export function report(
  d: DetectorContext,
  mi: number,
  dir: number,
  split: number,
  now: number,
  unc: number,
  p: number,
): StepChange | null {
  const o = d.opts;
  const s = d.metrics[mi]!;
  const other = 1 - mi;
  const joined =
    d.metrics[other]!.warmPoints >= o.warmupPoints &&
    testSplit(d, other, dir, split, now, false).p < JOIN_ALPHA;
  const transient = isOver(d, mi, dir, split, now);

  if (transient) {
    // A burst already over: the level is the one before it. Keep the
    // regime's history (as a write-off does) and restart the model on the
    // points since it ended.
    for (const m of joined ? [mi, other] : [mi]) {
      const st = d.metrics[m]!;
      const regimeStart = st.regimeStart;
      initRegime(d, m, now - TRANSIENT_TAIL + 1, now, st.slope);
      st.regimeStart = regimeStart;
    }
  } else {
    // Re-anchor the quantile(s) that moved at the new level.
    initRegime(d, mi, split, now, s.slope);
    if (joined) initRegime(d, other, split, now, d.metrics[other]!.slope);
  }

  // The other quantile may already have reported this very step.
  for (const r of d.recent) {
    if (r.direction === dir && Math.abs(r.onset - split) <= 5 + Math.max(r.uncertainty, unc))
      return null;
  }
  d.recent.push({ onset: split, direction: dir, uncertainty: unc });
  if (d.recent.length > 4) d.recent.shift();
  if (!transient) {
    // A step on a ramp: the drift, reported once (drift.ts).
    if (inDrift(d, dir, split, now)) return null;
    const drift = stepAsDrift(d, dir, split, now);
    if (drift) return drift;
  }
  const ch = describe(d, mi, dir, split, now, unc, p, joined);
  if (transient) ch.shape = 'transient';
  return ch;
}

/**
 * Is a step confirmed at `now` already over? A clear step (its levels at
 * least TRANSIENT_CLEAR_SD noise sds apart) of at most TRANSIENT_MAX_POINTS
 * points whose last TRANSIENT_TAIL points are all back on the before side
 * of the midpoint, each by more than a noise sd: a burst of a few minutes
 * that the rank test confirmed after it had ended. (For a real step, one
 * such point has a chance of ~2%.)
 */
function isOver(d: DetectorContext, mi: number, dir: number, split: number, now: number): boolean {
  const nA = now - split + 1;
  if (nA > TRANSIENT_MAX_POINTS || nA < TRANSIENT_TAIL + 2) return false;
  const s = d.metrics[mi]!;
  const from = Math.max(s.regimeStart, split - d.opts.beforePoints, now - d.ring.cap + 1);
  if (split - from < 4) return false;
  const mB = medianOf(d.ring.rangeY(mi, from, split - 1, 1));
  const mA = medianOf(d.ring.rangeY(mi, split, now - TRANSIENT_TAIL, 2));
  const sd = noiseSd(d, mi, now);
  if (dir * (mA - mB) < TRANSIENT_CLEAR_SD * sd) return false;
  const mid = (mA + mB) / 2;
  for (let v = now - TRANSIENT_TAIL + 1; v <= now; v++)
    if (dir * (d.ring.y(mi, v % d.ring.cap) - mid) > -sd) return false;
  return true;
}

function describe(
  d: DetectorContext,
  mi: number,
  dir: number,
  split: number,
  now: number,
  unc: number,
  p: number,
  joined: boolean,
): StepChange {
  const o = d.opts;
  const ring = d.ring;
  const beforeFrom = Math.max(
    split - o.beforePoints,
    now - ring.cap + 1,
    prevRegimeFloor(d, split),
  );
  const before = summarise(d, beforeFrom, split - 1);
  const after = summarise(d, split, now);
  const ratios = {
    p50: ratio(d, before.p50, after.p50),
    p99: ratio(d, before.p99, after.p99),
  };
  const metric = METRICS[mi]!;
  const metrics: StepMetric[] = joined ? ['p50', 'p99'] : [metric];
  // Report the quantile that moved most, when both did.
  let chosen = metric;
  if (joined)
    chosen = Math.abs(Math.log(ratios.p50)) >= Math.abs(Math.log(ratios.p99)) ? 'p50' : 'p99';
  const sp = split % ring.cap;
  const np = now % ring.cap;
  return {
    index: ring.index[sp]!,
    t: ring.time[sp]!,
    metric: chosen,
    metrics,
    direction: dir > 0 ? 'regression' : 'improvement',
    before,
    after,
    ratio: ratios[chosen],
    ratios,
    confidence: 1 - p,
    onsetUncertaintyPoints: unc,
    detectedIndex: ring.index[np]!,
    detectedT: ring.time[np]!,
  };
}

/** The "before" window should not reach back past the previous change of either quantile. */
function prevRegimeFloor(d: DetectorContext, split: number): number {
  let f = 0;
  for (const r of d.recent) if (r.onset < split) f = Math.max(f, r.onset);
  return f;
}

function summarise(d: DetectorContext, from: number, to: number): LevelSummary {
  const ring = d.ring;
  let count = 0;
  for (let v = from; v <= to; v++) count += ring.count[v % ring.cap]!;
  const floor = d.opts.floor;
  return {
    p50: Math.max(0, Math.exp(medianOf(ring.rangeRaw(0, from, to, 1))) - floor),
    p99: Math.max(0, Math.exp(medianOf(ring.rangeRaw(1, from, to, 1))) - floor),
    count,
    points: Math.max(0, to - from + 1),
  };
}

function ratio(d: DetectorContext, before: number, after: number): number {
  if (before > 0) return after / before;
  const f = d.opts.floor;
  return (after + f) / (before + f);
}
