/**
 * The shapes corpus: labelled series of the shapes seen in reality that the
 * step corpus (synth.ts) does not hold — short bursts, sustained ramps,
 * moderate steps in calm series, short series, tail steps (a slower share of
 * calls; delayed-ACK waits that collapse a noisy p99 onto a new floor), and
 * large steps starting mid-minute (time to open).
 *
 * Generated independently of the detector's assumptions: every minute's
 * quantiles are read from individual events (rank ceil(q·n) of the sorted
 * events, rounded to the histogram's buckets), the events drawn from
 * mixtures — a lognormal body, a slow component (GC pauses, cache misses)
 * and, for the delayed-ACK shape, a discrete 40 ms wait — with AR(1)
 * minute-to-minute load wander and occasional slow minutes. Nothing here
 * draws from the detector's noise model (log-normal per-minute quantiles
 * with a count-dependent variance).
 */
import { bucketIndex, bucketValue, type MinutePoint } from '@onset/core';
import { Rng } from './rng.ts';

export const SHAPE_KINDS = [
  'control',
  'burst',
  'ramp',
  'moderate-up',
  'moderate-down',
  'short',
  'tail-p99',
  'tail-floor',
  'large',
] as const;
export type ShapeKind = (typeof SHAPE_KINDS)[number];

export interface ShapeSeries {
  id: number;
  kind: ShapeKind;
  points: MinutePoint[];
  /** A step: index of the first point mostly at the new level, its size, and when in the minute before it began. */
  change?: { index: number; ratio: number; metric: 'p50' | 'p99'; startMinute: number };
  /** A burst: points [start, end) were slow. */
  burst?: { start: number; end: number; factor: number };
  /** A ramp: latency grew by `total` (×) over points [start, end), then held. */
  ramp?: { start: number; end: number; total: number };
}

export const SHAPES_T0 = Date.UTC(2026, 10, 20, 0, 0, 0);
const T0 = SHAPES_T0;

/** One series' event law: body, slow component, wander; `shape(i, u)` moves an event of minute i. */
interface Law {
  rate: number;
  median: number;
  sigma: number;
  slowShare: number;
  slowFactor: [number, number];
  wanderSd: number;
  phi: number;
  slowMinuteRate: number;
}

function randomLaw(rng: Rng, rate: [number, number]): Law {
  return {
    rate: rng.logUniform(rate[0], rate[1]),
    median: rng.logUniform(0.5, 50),
    sigma: rng.uniform(0.2, 0.7),
    slowShare: rng.uniform(0.002, 0.03),
    slowFactor: [3, rng.uniform(5, 30)],
    wanderSd: rng.uniform(0.01, 0.06),
    phi: rng.uniform(0, 0.8),
    slowMinuteRate: rng.uniform(0, 0.004),
  };
}

/** Round to the histogram's log buckets, as quantiles read from storage are. */
function quantise(ms: number): number {
  return bucketValue(bucketIndex(ms * 1000)) / 1000;
}

/**
 * Minutes of a series: for each minute i, n events from `law`, each passed
 * through `move(i, x, rng, frac)` (frac: the event's position in the minute,
 * for changes starting mid-minute); p50/p99 read as the histograms do.
 */
function minutes(
  rng: Rng,
  law: Law,
  count: number,
  move: (i: number, x: number, frac: number) => number,
): MinutePoint[] {
  const out: MinutePoint[] = [];
  let wander = 0;
  const buf: number[] = [];
  for (let i = 0; i < count; i++) {
    wander = law.phi * wander + Math.sqrt(1 - law.phi * law.phi) * law.wanderSd * rng.normal();
    const n = rng.poisson(law.rate);
    if (n === 0) continue;
    const slowMinute = rng.chance(law.slowMinuteRate) ? rng.uniform(0.05, 0.3) : 0;
    buf.length = 0;
    for (let e = 0; e < n; e++) {
      let x = law.median * Math.exp(law.sigma * rng.normal() + wander);
      if (rng.chance(law.slowShare)) x *= rng.logUniform(law.slowFactor[0], law.slowFactor[1]);
      if (slowMinute && rng.chance(slowMinute)) x *= rng.logUniform(2, 10);
      buf.push(move(i, x, (e + rng.next()) / n));
    }
    buf.sort((a, b) => a - b);
    const at = (q: number) => buf[Math.max(1, Math.ceil(q * n)) - 1]!;
    out.push({ t: T0 + i * 60_000, count: n, p50: quantise(at(0.5)), p99: quantise(at(0.99)) });
  }
  return out;
}

/** Index of the first point at or after minute m (points may skip empty minutes). */
const indexAt = (points: MinutePoint[], m: number) => {
  const t = T0 + m * 60_000;
  const k = points.findIndex((p) => p.t >= t);
  return k < 0 ? points.length : k;
};

export function generateShapes(opts: { perKind: number; seed: number }): ShapeSeries[] {
  const out: ShapeSeries[] = [];
  let id = 0;
  for (const kind of SHAPE_KINDS)
    for (let j = 0; j < opts.perKind; j++)
      out.push(generateShape(id++, kind, opts.seed * 7_919 + id * 104_729));
  return out;
}

export function generateShape(id: number, kind: ShapeKind, seed: number): ShapeSeries {
  const rng = new Rng(seed);
  const M = 720;
  switch (kind) {
    case 'control': {
      const law = randomLaw(rng, [3, 400]);
      return { id, kind, points: minutes(rng, law, M, (_, x) => x) };
    }
    case 'burst': {
      // A stall of 2-8 minutes: every call (or most of them) many times slower, then back.
      const law = randomLaw(rng, [2, 400]);
      const start = rng.int(300, 600);
      const len = rng.int(2, 8);
      const factor = rng.logUniform(5, 1000);
      const share = rng.chance(0.5) ? 1 : rng.uniform(0.6, 1);
      const points = minutes(rng, law, M, (i, x) =>
        i >= start && i < start + len && rng.chance(share) ? x * factor : x,
      );
      return {
        id,
        kind,
        points,
        burst: { start: indexAt(points, start), end: indexAt(points, start + len), factor },
      };
    }
    case 'ramp': {
      // Sustained growth (a leak, a growing table): ×1.5-4 over 2-8 hours, then it holds.
      const law = randomLaw(rng, [10, 400]);
      const start = rng.int(200, 260);
      const len = rng.int(120, 440);
      const total = rng.logUniform(1.5, 4);
      const g = Math.log(total) / len;
      const points = minutes(rng, law, M, (i, x) =>
        i < start ? x : x * Math.exp(g * Math.min(i - start, len)),
      );
      return {
        id,
        kind,
        points,
        ramp: { start: indexAt(points, start), end: indexAt(points, start + len), total },
      };
    }
    case 'moderate-up':
    case 'moderate-down': {
      // A calm series (steady load, no cycle) whose every call gets ×1.2-1.5 slower (or faster).
      const law = randomLaw(rng, [20, 400]);
      law.wanderSd = rng.uniform(0.005, 0.03);
      law.slowMinuteRate = 0;
      const r = rng.uniform(1.2, 1.5);
      const f = kind === 'moderate-up' ? r : 1 / r;
      return step(rng, id, kind, law, M, rng.int(300, 560), f, 'p50');
    }
    case 'short': {
      // A new series: 16-40 points, one step ×2-5 either way with ≥ 10 points before and ≥ 6 after.
      const law = randomLaw(rng, [5, 200]);
      const len = rng.int(16, 40);
      const at = rng.int(10, len - 6);
      const r = rng.logUniform(2, 5);
      return step(rng, id, kind, law, len, at, rng.chance(0.7) ? r : 1 / r, 'p50');
    }
    case 'tail-p99': {
      // 3-10% of calls take a slow path ×3-10 (a retry, a cold cache): the p99 moves, the median does not.
      const law = randomLaw(rng, [30, 400]);
      const share = rng.uniform(0.03, 0.1);
      const slow = rng.logUniform(3, 10);
      const at = rng.int(300, 560);
      const mid = rng.next();
      const points = minutes(rng, law, M, (i, x, frac) =>
        (i > at || (i === at && frac >= mid)) && rng.chance(share) ? x * slow : x,
      );
      return {
        id,
        kind,
        points,
        change: {
          index: indexAt(points, mid < 0.5 ? at : at + 1),
          ratio: slow,
          metric: 'p99',
          startMinute: at + mid,
        },
      };
    }
    case 'tail-floor': {
      // Delayed ACK on the caller's client view (issue 20's Nagle pair). The
      // caller's own background tail (GC pauses, event-loop stalls: 1-3 % of
      // calls, lognormal around 30-60 ms) makes its p99 wander (~24-98 ms)
      // before and after. From the change on, the callee writes header and
      // body separately with Nagle on: for a share of calls (5-20 %, those
      // whose response crosses the write boundary while the caller's ACK is
      // delayed) the body waits for the caller's delayed-ACK timer: 40 ms
      // plus up to a 4 ms tick, on top of the call's own time and a small
      // extra delay of the second write. Nothing here is drawn per minute:
      // the p99 settling at ~45-65 ms is what the events add up to.
      const law: Law = {
        rate: rng.logUniform(15, 600),
        median: rng.uniform(1.5, 5),
        sigma: rng.uniform(0.3, 0.5),
        slowShare: rng.uniform(0.01, 0.03),
        slowFactor: [1, 1],
        wanderSd: rng.uniform(0.01, 0.04),
        phi: rng.uniform(0, 0.6),
        slowMinuteRate: rng.uniform(0, 0.004),
      };
      const bgMedian = rng.uniform(30, 60);
      const bgSigma = rng.uniform(0.5, 0.7);
      const share = rng.uniform(0.05, 0.2);
      const at = rng.int(300, 560);
      const mid = rng.next();
      const points = minutes(rng, { ...law, slowShare: 0 }, M, (i, x, frac) => {
        // The background tail, before and after.
        if (rng.chance(law.slowShare)) return x + bgMedian * Math.exp(bgSigma * rng.normal());
        const after = i > at || (i === at && frac >= mid);
        if (after && rng.chance(share))
          return x + 40 + 4 * rng.next() + 0.5 * Math.exp(0.8 * rng.normal());
        return x;
      });
      return {
        id,
        kind,
        points,
        change: {
          index: indexAt(points, mid < 0.5 ? at : at + 1),
          ratio: NaN,
          metric: 'p99',
          startMinute: at + mid,
        },
      };
    }
    case 'large': {
      // A large step (×2-10) at 50-400 calls a minute, starting anywhere in its minute.
      const law = randomLaw(rng, [50, 400]);
      const r = rng.logUniform(2, 10);
      return step(rng, id, kind, law, M, rng.int(300, 560), rng.chance(0.8) ? r : 1 / r, 'p50');
    }
  }
}

/** Every call ×f from a random moment of minute `at` on. */
function step(
  rng: Rng,
  id: number,
  kind: ShapeKind,
  law: Law,
  M: number,
  at: number,
  f: number,
  metric: 'p50' | 'p99',
): ShapeSeries {
  const mid = rng.next();
  const points = minutes(rng, law, M, (i, x, frac) =>
    i > at || (i === at && frac >= mid) ? x * f : x,
  );
  return {
    id,
    kind,
    points,
    change: {
      index: indexAt(points, mid < 0.5 ? at : at + 1),
      ratio: f,
      metric,
      startMinute: at + mid,
    },
  };
}
