/**
 * Labelled synthetic series for the step-detector evaluation.
 *
 * Each minute's p50 and p99 are the sample quantiles (rank ceil(q·n), as the
 * Histogram reads them) of n events drawn from the series' latency
 * distribution, sampled exactly through order statistics: U(k) ~ Beta(k,
 * n-k+1) mapped through the distribution's quantile function and then through
 * the minute's monotone transform (steps, diurnal factor, jitter, spikes,
 * flat shift), then rounded to the histogram's 1% buckets. So a minute with 2
 * events has the noisy p99 (its max) that a real one has, at O(1) cost.
 *
 * Series: 2 days of minutes by default; events per minute from 1 to 1,000
 * (Poisson around a rate, with diurnal swings); lognormal bodies with Pareto
 * tails; AR(1) minute-to-minute jitter; isolated spike minutes; optional
 * diurnal cycles and outage gaps; 35% change-free controls, the rest 1-3
 * steps: p50 steps (the whole distribution scales), p99 steps (only the
 * slowest 5% of events slow down), flat +N shifts (every event gains N), and
 * gap-view series (client minus server, near zero, read with a 1 ms floor).
 * 30% of steps are improvements. Ratios are drawn evenly over five buckets
 * from 1.2× to 1000×.
 */
import { bucketIndex, bucketValue } from '@onset/core';
import type { MinutePoint } from '@onset/core';
import { Rng } from './rng.ts';

export type ChangeKind = 'p50' | 'p99' | 'flat' | 'gap';

export interface TruthChange {
  /** Index of the first point (minute with data) at the new level. */
  index: number;
  minute: number;
  kind: ChangeKind;
  direction: 'regression' | 'improvement';
  /** Size of the labelled quantile's step (≥ 1, whichever the direction). */
  ratio: number;
  metric: 'p50' | 'p99';
}

export interface SynthSeries {
  id: number;
  view: 'latency' | 'gap';
  floor: number;
  rate: number;
  rateBucket: RateBucket;
  diurnal: boolean;
  gaps: boolean;
  points: MinutePoint[];
  truth: TruthChange[];
}

export const RATIO_BUCKETS = [
  [1.2, 1.5],
  [1.5, 2],
  [2, 5],
  [5, 50],
  [50, 1000],
] as const;
export const RATE_BUCKETS = ['1-5', '5-20', '20-100', '100-1000'] as const;
export type RateBucket = (typeof RATE_BUCKETS)[number];
const RATE_RANGE: Record<RateBucket, [number, number]> = {
  '1-5': [1, 5],
  '5-20': [5, 20],
  '20-100': [20, 100],
  '100-1000': [100, 1000],
};

export interface SynthOptions {
  series: number;
  minutes: number;
  seed: number;
}

const DAY = 1440;
const T0 = Date.UTC(2026, 10, 18, 0, 0, 0);

interface PlannedChange {
  minute: number;
  kind: ChangeKind;
  improvement: boolean;
  target: number;
}

/** Level state: p50 multiplier, tail multiplier (≥ 1), flat additive shift. */
interface LevelState {
  p: number;
  m: number;
  n: number;
}

export function generateCorpus(opts: SynthOptions): SynthSeries[] {
  const out: SynthSeries[] = [];
  for (let i = 0; i < opts.series; i++)
    out.push(generateSeries(i, opts.minutes, opts.seed * 1_000_003 + i));
  return out;
}

export function generateSeries(id: number, minutes: number, seed: number): SynthSeries {
  const rng = new Rng(seed);
  const view: SynthSeries['view'] = rng.chance(0.15) ? 'gap' : 'latency';
  const floor = view === 'gap' ? 1 : 0;
  const rateBucket = rng.pick(RATE_BUCKETS);
  const rate = rng.logUniform(...RATE_RANGE[rateBucket]);
  const diurnal = rng.chance(0.5);
  const gaps = rng.chance(0.3);

  // The event distribution (ms): lognormal body, Pareto-tailed contamination.
  const median = view === 'gap' ? rng.logUniform(0.05, 0.5) : rng.logUniform(0.05, 500);
  const sigma = view === 'gap' ? rng.uniform(0.3, 0.8) : rng.uniform(0.3, 1.0);
  const heavyShare = rng.uniform(0.002, 0.02);
  const paretoAlpha = rng.uniform(1.2, 2);
  const Q = quantileTable(rng, median, sigma, heavyShare, paretoAlpha);
  const q95 = Q(0.95);

  const dAmp = diurnal ? rng.uniform(0.05, 0.35) : 0;
  const cAmp = diurnal ? rng.uniform(0.3, 0.8) : 0;
  const phase = rng.uniform(0, DAY);
  const jitterSd = rng.uniform(0.01, 0.05);
  const phi = rng.uniform(0, 0.7);
  const spikeRate = rng.uniform(0.001, 0.005);

  const outages: Array<[number, number]> = [];
  if (gaps) {
    const k = rng.int(1, 3);
    for (let j = 0; j < k; j++) {
      const len = rng.int(5, 180);
      const start = rng.int(60, minutes - len - 60);
      outages.push([start, start + len]);
    }
  }

  // Plan the changes: positions at least 300 minutes apart, 240 from the start, 180 from the end.
  const planned: PlannedChange[] = [];
  if (!rng.chance(0.35)) {
    const k = rng.int(1, 3);
    for (let attempt = 0; attempt < 200 && planned.length < k; attempt++) {
      const minute = rng.int(240, minutes - 180);
      if (planned.every((c) => Math.abs(c.minute - minute) >= 300)) {
        const kind: ChangeKind =
          view === 'gap' ? 'gap' : rng.next() < 0.4 ? 'p50' : rng.next() < 0.5 ? 'p99' : 'flat';
        const [lo, hi] = rng.pick(RATIO_BUCKETS);
        planned.push({
          minute,
          kind,
          improvement: rng.chance(0.3),
          target: rng.logUniform(lo, hi),
        });
      }
    }
    planned.sort((a, b) => a.minute - b.minute);
  }

  // Level path: every step realises its target ratio exactly on the labelled
  // quantile (p50 for p50/flat/gap steps, p99 for tail steps), whatever came
  // before it. An improvement removes something that must be there: a flat
  // delay (n) or a slow tail (m ≥ 1), so the series starts with just enough
  // of it (the smallest n0 and m0 that keep every later state valid).
  const q50 = Q(0.5);
  const q99 = Q(0.99);
  const p50Of = (s: LevelState) => q50 * s.p + s.n + floor;
  const p99Of = (s: LevelState) => (q99 > q95 ? q99 * s.m : q99) * s.p + s.n + floor;
  const simulate = (
    n0: number,
    m0: number,
  ): { states: LevelState[]; ok: boolean; nOk: boolean } => {
    let st: LevelState = { p: 1, m: m0, n: n0 };
    const out = [st];
    let ok = true;
    let nOk = true;
    for (const c of planned) {
      const r = c.improvement ? 1 / c.target : c.target;
      const next = { ...st };
      if (c.kind === 'p50') {
        // Everything slows down (or speeds up) by r, the flat part included.
        next.p = st.p * r;
        next.n = st.n * r;
      } else if (c.kind === 'p99') {
        const target = p99Of(st) * r;
        next.m = (target - st.n - floor) / (q99 * st.p);
        if (!(next.m >= 1)) ok = false;
      } else {
        next.n = p50Of(st) * r - q50 * st.p - floor;
        if (!(next.n >= 0)) nOk = ok = false;
      }
      out.push(next);
      st = next;
    }
    return { states: out, ok, nOk };
  };
  const smallest = (feasible: (x: number) => boolean): number => {
    if (feasible(0)) return 0;
    let hi = 1;
    while (!feasible(hi)) hi *= 4;
    let lo = hi / 4;
    for (let i = 0; i < 50; i++) {
      const mid = (lo + hi) / 2;
      if (feasible(mid)) hi = mid;
      else lo = mid;
    }
    return hi;
  };
  const n0 = smallest((n) => simulate(n, 1e12).nOk);
  const m0 = Math.max(1, 1 + smallest((m) => simulate(n0, 1 + m).ok));
  const states = simulate(n0, m0).states;
  const trueQ = (s: LevelState, u: number): number => (u >= 0.99 ? p99Of(s) : p50Of(s));

  // Minutes.
  const points: MinutePoint[] = [];
  const firstIndexAt: number[] = planned.map(() => -1);
  let jitter = 0;
  let seg = 0;
  for (let i = 0; i < minutes; i++) {
    jitter = phi * jitter + Math.sqrt(1 - phi * phi) * jitterSd * rng.normal();
    while (seg < planned.length && planned[seg]!.minute <= i) seg++;
    const s = states[seg]!;
    const angle = (2 * Math.PI * (i + phase)) / DAY;
    const spike = rng.chance(spikeRate) ? rng.logUniform(3, 30) : 1;
    if (outages.some(([a, b]) => i >= a && i < b)) continue;
    const n = rng.poisson(Math.max(0.05, rate * (1 + cAmp * Math.sin(angle))));
    if (n === 0) continue;
    const k50 = Math.max(1, Math.ceil(0.5 * n));
    const k99 = Math.max(1, Math.ceil(0.99 * n));
    const u50 = rng.beta(k50, n - k50 + 1);
    const u99 = k99 === k50 ? u50 : u50 + (1 - u50) * rng.beta(k99 - k50, n - k99 + 1);
    const level = s.p * Math.exp(dAmp * Math.sin(angle) + jitter) * spike;
    const value = (u: number): number => {
      const x = Q(u);
      return quantise((x > q95 ? x * s.m : x) * level + s.n);
    };
    for (let j = 0; j < planned.length; j++)
      if (firstIndexAt[j] === -1 && i >= planned[j]!.minute) firstIndexAt[j] = points.length;
    points.push({ t: T0 + i * 60_000, count: n, p50: value(u50), p99: value(u99) });
  }

  const truth: TruthChange[] = [];
  planned.forEach((c, j) => {
    if (firstIndexAt[j] === -1) return;
    const metric = c.kind === 'p99' ? 'p99' : 'p50';
    const u = metric === 'p99' ? 0.99 : 0.5;
    const before = trueQ(states[j]!, u);
    const after = trueQ(states[j + 1]!, u);
    truth.push({
      index: firstIndexAt[j]!,
      minute: c.minute,
      kind: c.kind,
      direction: c.improvement ? 'improvement' : 'regression',
      ratio: Math.max(after / before, before / after),
      metric,
    });
  });
  return { id, view, floor, rate, rateBucket, diurnal, gaps, points, truth };
}

/** Quantile function of the event distribution, tabulated from a sorted sample. */
function quantileTable(
  rng: Rng,
  median: number,
  sigma: number,
  heavyShare: number,
  alpha: number,
): (u: number) => number {
  const K = 20_000;
  const xs = new Float64Array(K);
  for (let i = 0; i < K; i++) {
    let x = median * Math.exp(sigma * rng.normal());
    if (rng.chance(heavyShare)) x *= Math.pow(rng.next(), -1 / alpha);
    xs[i] = x;
  }
  xs.sort();
  return (u: number) => {
    const pos = u * (K - 1);
    const i = Math.floor(pos);
    if (i >= K - 1) return xs[K - 1]!;
    const f = pos - i;
    return xs[i]! * (1 - f) + xs[i + 1]! * f;
  };
}

/** Round to the histogram's log buckets, as quantiles read from storage are. */
function quantise(ms: number): number {
  return bucketValue(bucketIndex(ms * 1000)) / 1000;
}
