/**
 * The detector's state at the boundary: DetectorStateJSON is the compact,
 * stored form (short keys, plain JSON; codec.ts packs it further), mapped
 * from and to the readable in-memory state here and nowhere else.
 */
import type { DetectorContext, RecentChange } from './context.ts';
import { newMetricState, type MetricState } from './metric-state.ts';
import { Z99, zAt } from './ring.ts';
import type { ResolvedDetectOptions } from './types.ts';

/** In-memory name → stored key, in the stored key order (the order of the JSON). */
const METRIC_KEYS = [
  ['warmPoints', 'warm'],
  ['level', 'level'],
  ['slope', 'slope'],
  ['levelT', 'lastT'],
  ['fedThrough', 'fed'],
  ['noiseWeight', 'w'],
  ['noiseSumU', 'su'],
  ['noiseSumUU', 'suu'],
  ['noiseSumD2', 'sd'],
  ['noiseSumUD2', 'sud'],
  ['perEventVar', 'a'],
  ['minuteVar', 'tau2'],
  ['calibSum', 'zsum'],
  ['calibSquare', 'cm2'],
  ['calibScale', 'kappa'],
  ['fastUp', 'up'],
  ['fastDown', 'dn'],
  ['fastUpStart', 'upStart'],
  ['fastDownStart', 'dnStart'],
  ['slowUp', 'us'],
  ['slowDown', 'ds'],
  ['slowUpStart', 'usStart'],
  ['slowDownStart', 'dsStart'],
  ['tailThreshold', 'thr'],
  ['tailThresholdAt', 'thrAt'],
  ['tailShare', 'pe'],
  ['tailBaseRate', 'p0'],
  ['tailUpAbove', 'lu1'],
  ['tailUpBelow', 'lu0'],
  ['tailDownAbove', 'ld1'],
  ['tailDownBelow', 'ld0'],
  ['tailUp', 'eu'],
  ['tailDown', 'ed'],
  ['tailUpStart', 'euStart'],
  ['tailDownStart', 'edStart'],
  ['alarm', 'alarm'],
  ['alarmSource', 'src'],
  ['alarmTests', 'tests'],
  ['alarmOnset', 'onset'],
  ['nextTest', 'nextTest'],
  ['regimeStart', 'regimeStart'],
  ['blockStart', 'xs'],
  ['blockPoints', 'xn'],
  ['blockTop1', 'x1'],
  ['blockTop2', 'x2'],
  ['openStart', 'cs'],
  ['openPoints', 'cn'],
  ['openTop1', 'c1'],
  ['openTop2', 'c2'],
  ['extremeThreshold', 'xt'],
  ['extremeHistory', 'xN'],
  ['exceedances', 'xe'],
  ['extremeRounds', 'xk'],
  ['wanderMedians', 'wm'],
  ['wanderLag1', 'w1'],
  ['wanderLag8', 'w8'],
  ['calmVerdicts', 'calm'],
] as const satisfies ReadonlyArray<readonly [keyof MetricState, string]>;

type MetricKeys = (typeof METRIC_KEYS)[number];
// Every in-memory field has a stored key (a compile error otherwise).
const everyFieldStored: Exclude<keyof MetricState, MetricKeys[0]> extends never ? true : false =
  true;
void everyFieldStored;

/** One quantile's state as stored (short keys). */
type MetricStateJSON = { [K in MetricKeys as K[1]]: MetricState[K[0]] };

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
  /** Decayed sums of the spread estimate, and the estimate. */
  spread: [number, number, number];
  metrics: MetricStateJSON[];
  recent: { onset: number; dir: number; unc: number }[];
  /** The drift episode reported last: [direction, start, last seen rising] (valid indices); absent in older states. */
  drift?: [number, number, number];
}

const copyValue = <T>(x: T): T => (Array.isArray(x) ? ([...x] as T) : x);

function metricToJSON(m: MetricState): MetricStateJSON {
  const out: Record<string, unknown> = {};
  for (const [name, key] of METRIC_KEYS) out[key] = copyValue(m[name]);
  return out as MetricStateJSON;
}

/** Fields missing from the stored form keep their initial values. */
function metricFromJSON(j: Partial<MetricStateJSON>, into: MetricState): void {
  const m = into as unknown as Record<string, unknown>;
  const src = j as Record<string, unknown>;
  for (const [name, key] of METRIC_KEYS) if (key in src) m[name] = copyValue(src[key]);
}

/** The stored form of a detector's state. */
export function stateToJSON(
  d: DetectorContext,
  pointsSeen: number,
  lastT: number,
): DetectorStateJSON {
  const r = d.ring;
  const size = Math.min(r.valid, r.cap);
  const ring = {
    t: [] as number[],
    c: [] as number[],
    g: [] as number[],
    y50: [] as number[],
    y99: [] as number[],
  };
  for (let v = r.valid - size; v < r.valid; v++) {
    const p = v % r.cap;
    ring.t.push(r.time[p]!);
    ring.c.push(r.count[p]!);
    ring.g.push(r.index[p]!);
    ring.y50.push(r.logValue[0][p]!);
    ring.y99.push(r.logValue[1][p]!);
  }
  const kept = Math.min(Math.max(0, r.valid - r.cap - r.longFrom), r.longCap);
  const long = { t: [] as number[], y: [] as number[] };
  let prev = 0;
  for (let v = r.valid - r.cap - kept; v < r.valid - r.cap; v++) {
    const q = v % r.longCap;
    // Minutes as differences from the previous point (mostly 1): a short JSON.
    long.t.push(long.t.length ? r.longMinute[q]! - prev : r.longMinute[q]!);
    prev = r.longMinute[q]!;
    long.y.push(r.longMicro[q]!);
  }
  return {
    v: 1,
    opts: { ...d.opts },
    n: pointsSeen,
    nv: r.valid,
    lastT: Number.isFinite(lastT) ? lastT : null,
    ring,
    long,
    spread: [r.spreadXZ, r.spreadZZ, r.sigmaU],
    metrics: d.metrics.map(metricToJSON),
    recent: d.recent.map((c) => ({ onset: c.onset, dir: c.direction, unc: c.uncertainty })),
    ...(d.drift.dir !== 0 ? { drift: [d.drift.dir, d.drift.start, d.drift.seen] } : {}),
  };
}

/** Restore a stored state into a fresh context built with `state.opts`. */
export function stateFromJSON(state: DetectorStateJSON, d: DetectorContext): void {
  const r = d.ring;
  r.valid = state.nv;
  const size = state.ring.t.length;
  for (let i = 0; i < size; i++) {
    const p = (state.nv - size + i) % r.cap;
    r.time[p] = state.ring.t[i]!;
    r.count[p] = state.ring.c[i]!;
    r.zShift[0][p] = -zAt(0, r.count[p]!);
    r.zShift[1][p] = Z99 - zAt(1, r.count[p]!);
    r.index[p] = state.ring.g[i]!;
    r.logValue[0][p] = state.ring.y50[i]!;
    r.logValue[1][p] = state.ring.y99[i]!;
  }
  const long = state.long;
  // What the state did not keep is not history: the scan starts after it.
  r.longFrom = Math.max(0, state.nv - size - Math.min(long?.t.length ?? 0, r.longCap));
  if (long && r.longCap > 0) {
    let minute = 0;
    for (let i = 0; i < long.t.length; i++) {
      minute = i ? minute + long.t[i]! : long.t[i]!;
      const v = state.nv - size - long.t.length + i;
      if (v < 0 || i < long.t.length - r.longCap) continue;
      r.longMinute[v % r.longCap] = minute;
      r.longMicro[v % r.longCap] = long.y[i]!;
    }
  }
  [r.spreadXZ, r.spreadZZ, r.sigmaU] = state.spread;
  for (let mi = 0; mi < 2; mi++) {
    const m = d.metrics[mi]!;
    Object.assign(m, newMetricState());
    metricFromJSON(state.metrics[mi]!, m);
  }
  d.recent = state.recent.map((c): RecentChange => ({
    onset: c.onset,
    direction: c.dir,
    uncertainty: c.unc,
  }));
  const [dir, start, seen] = state.drift ?? [0, 0, 0];
  d.drift = { dir, start, seen };
}
