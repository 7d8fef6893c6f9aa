import { readFileSync } from 'node:fs';
import { mulberry32Open } from '@onset/testkit/random';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  detectSteps,
  detectStepsIncremental,
  stepRecovery,
  StepDetector,
  type DetectorStateJSON,
  type MinutePoint,
  type StepChange,
} from '../src/detect/index.ts';

/**
 * Detection is statistical: with random seeds a property over noisy series
 * would now and then meet the rare false alarm or late confirmation the
 * evaluation measures (bench/eval-detect). A fixed seed keeps these generated
 * cases reproducible; change it to explore others.
 */
const SEED = 20261122;

/** [minute, count, p50 µs, p99 µs] of a live run's fsync-burst series (see its test below). */
const LIVE_FSYNC_BURST = JSON.parse(
  readFileSync(new URL('./fixtures/live-fsync-burst.json', import.meta.url), 'utf8'),
) as [number, number, number, number][];

/** Small seeded PRNG (mulberry32) so every generated series is reproducible. */
function rng(seed: number) {
  const next = mulberry32Open(seed);
  const normal = () => Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
  const poisson = (l: number) => {
    if (l > 50) return Math.max(0, Math.round(l + Math.sqrt(l) * normal()));
    let k = 0;
    let p = 1;
    const L = Math.exp(-l);
    do {
      k++;
      p *= next();
    } while (p > L);
    return k - 1;
  };
  return { next, normal, poisson };
}

interface SeriesSpec {
  seed: number;
  minutes: number;
  /** Events per minute (Poisson mean). */
  rate: number;
  /** Median latency (ms) and log-spread of events. */
  median: number;
  sigma: number;
  /** Step at this minute: multiply every event by `factor` (p50 step), or add `shift` ms. */
  stepAt?: number;
  factor?: number;
  shift?: number;
  /** Diurnal: log-amplitude of latency and relative amplitude of traffic. */
  diurnal?: number;
  trafficSwing?: number;
  /** Probability a minute is a spike (every event × 3-30). */
  spikes?: number;
  /** Probability a minute is missing entirely. */
  missing?: number;
  /** Share of events from a Pareto tail (×U^-1/1.5). */
  heavy?: number;
}

/** Per-minute p50/p99 of simulated events, read as the Histogram does (rank ceil(q·n)). */
function series(spec: SeriesSpec): MinutePoint[] {
  const r = rng(spec.seed);
  const out: MinutePoint[] = [];
  for (let i = 0; i < spec.minutes; i++) {
    const angle = (2 * Math.PI * i) / 1440;
    const n = r.poisson(spec.rate * (1 + (spec.trafficSwing ?? 0) * Math.sin(angle)));
    const spike = r.next() < (spec.spikes ?? 0) ? 3 + 27 * r.next() : 1;
    if (r.next() < (spec.missing ?? 0) || n === 0) continue;
    const stepped = spec.stepAt !== undefined && i >= spec.stepAt;
    const level =
      Math.exp((spec.diurnal ?? 0) * Math.sin(angle)) * spike * (stepped ? (spec.factor ?? 1) : 1);
    const add = stepped ? (spec.shift ?? 0) : 0;
    const ev: number[] = [];
    for (let k = 0; k < n; k++) {
      let x = spec.median * Math.exp(spec.sigma * r.normal());
      if (r.next() < (spec.heavy ?? 0)) x *= Math.pow(r.next(), -1 / 1.5);
      ev.push(x * level + add);
    }
    ev.sort((a, b) => a - b);
    const q = (p: number) => ev[Math.max(1, Math.ceil(p * n)) - 1]!;
    out.push({ t: Date.UTC(2026, 0, 1) + i * 60_000, count: n, p50: q(0.5), p99: q(0.99) });
  }
  return out;
}

/**
 * 1,400 minutes of events around 20 ms (log-spread `sigma`) in which a
 * slower 5% of events (× `tail`) is present from minute 800 on (`appears`)
 * or only before it; `truth` is the index of the first point from minute 800.
 */
function slowTailSeries(
  seed: number,
  spec: { rate: number; sigma: number; tail: number; appears: boolean },
): { points: MinutePoint[]; truth: number } {
  const r = rng(seed);
  const out: MinutePoint[] = [];
  let truth = -1;
  for (let i = 0; i < 1400; i++) {
    const n = r.poisson(spec.rate);
    if (n === 0) continue;
    if (i >= 800 && truth < 0) truth = out.length;
    const slow = i >= 800 === spec.appears;
    const ev: number[] = [];
    for (let k = 0; k < n; k++) {
      const x = 20 * Math.exp(spec.sigma * r.normal());
      ev.push(slow && r.next() < 0.05 ? x * spec.tail : x);
    }
    ev.sort((a, b) => a - b);
    const q = (p: number) => ev[Math.max(1, Math.ceil(p * n)) - 1]!;
    out.push({ t: Date.UTC(2026, 0, 1) + i * 60_000, count: n, p50: q(0.5), p99: q(0.99) });
  }
  return { points: out, truth };
}

/** The changes found when `points` arrive in chunks of `size`, the state going through JSON in between. */
function detectInChunks(points: MinutePoint[], size: number): StepChange[] {
  let state: DetectorStateJSON | undefined;
  const got: StepChange[] = [];
  for (let at = 0; at < points.length; at += size) {
    const r = detectStepsIncremental(state, points.slice(at, at + size));
    state = JSON.parse(JSON.stringify(r.state)) as DetectorStateJSON;
    got.push(...r.changes);
  }
  return got;
}

const firstIndexAtOrAfter = (points: MinutePoint[], minute: number) =>
  points.findIndex((p) => p.t >= Date.UTC(2026, 0, 1) + minute * 60_000);

describe('detectSteps: steps are found, located and sized', () => {
  it('finds a large step in p50 (≥2×, ≥20 events/min) within ±5 points and within a few points of delay', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.double({ min: Math.log(2), max: Math.log(1000), noNaN: true }),
        fc.boolean(),
        fc.double({ min: 20, max: 200, noNaN: true }),
        fc.integer({ min: 300, max: 700 }),
        (seed, logRatio, up, rate, stepAt) => {
          const factor = Math.exp(up ? logRatio : -logRatio);
          const points = series({
            seed,
            minutes: 900,
            rate,
            median: 5,
            sigma: 0.6,
            stepAt,
            factor,
            spikes: 0.003,
            heavy: 0.005,
          });
          const truth = firstIndexAtOrAfter(points, stepAt);
          const changes = detectSteps(points);
          const hit = changes.filter((c) => Math.abs(c.index - truth) <= 5);
          expect(hit).toHaveLength(1);
          const c = hit[0]!;
          expect(c.direction).toBe(up ? 'regression' : 'improvement');
          // Delay: points from the true onset up to confirmation, inclusive.
          expect(c.detectedIndex - truth + 1).toBeLessThanOrEqual(15);
          // The reported size is the step's (within 25% in log terms).
          expect(Math.abs(Math.log(c.ratios.p50) - Math.log(factor))).toBeLessThan(
            0.25 * Math.abs(Math.log(factor)) + 0.1,
          );
          // Nothing else in a series with a single step.
          expect(changes.filter((x) => Math.abs(x.index - truth) > 5)).toHaveLength(0);
        },
      ),
      { numRuns: 30, seed: SEED },
    );
  });

  it('confirms large steps within 5 points (median), 3 for the largest', () => {
    const delays: number[] = [];
    const bigDelays: number[] = [];
    for (let k = 0; k < 40; k++) {
      const r = rng(1000 + k);
      const logRatio = Math.log(2) + r.next() * (Math.log(1000) - Math.log(2));
      const factor = Math.exp(r.next() < 0.3 ? -logRatio : logRatio);
      const points = series({
        seed: 2000 + k,
        minutes: 500,
        rate: 20 + 180 * r.next(),
        median: 5,
        sigma: 0.6,
        stepAt: 400,
        factor,
        spikes: 0.003,
      });
      const truth = firstIndexAtOrAfter(points, 400);
      const c = detectSteps(points).find((x) => Math.abs(x.index - truth) <= 5);
      expect(c).toBeDefined();
      delays.push(c!.detectedIndex - truth + 1);
      if (logRatio > Math.log(10)) bigDelays.push(c!.detectedIndex - truth + 1);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    expect(median(delays)).toBeLessThanOrEqual(5);
    expect(median(bigDelays)).toBeLessThanOrEqual(4);
  });

  it('confirms a large, tight step (×3-10) on its 3rd point once it has 2 hours of history, dense or sparse', () => {
    // Issue 20: a step is opened within 5 minutes of a change. A step that begins mid-minute
    // has its first whole minute next; the rank tests with their penalties need a 4th point,
    // which opens it 4.3 minutes after that minute began: too late once the change itself is
    // half a minute into its minute.
    const delays: number[] = [];
    for (let k = 0; k < 24; k++) {
      const r = rng(3000 + k);
      const points = series({
        seed: 4000 + k,
        minutes: 300,
        rate: k % 2 ? 400 : 7,
        median: 3,
        sigma: 0.15,
        stepAt: 200,
        factor: 3 + 7 * r.next(),
      });
      const truth = firstIndexAtOrAfter(points, 200);
      const changes = detectSteps(points, { minRatio: 1.2 });
      expect(changes.map((c) => c.index)).toEqual([truth]);
      delays.push(changes[0]!.detectedIndex - truth + 1);
    }
    expect(delays.filter((d) => d <= 3).length).toBeGreaterThanOrEqual(22);
  });

  it('confirms the live fsync-per-unlink step on its 3rd point though a loaded disk made its history wander', () => {
    // Recorded by apps/agent/test/live/host.test.ts on a host at load 29: the agent's
    // fsync-burst series (8 removal passes a test minute, µs), the change in its minute 96.
    // The disk's other load made the passes' time wander (0.3-5 ms), which calibrates scores
    // down ×2.6: the clipped CUSUM needs 8 points and the step (×20) is not 6 calibrated sds
    // out, though it is far above anything of the last hour. Confirmed on its 5th point before.
    const points: MinutePoint[] = LIVE_FSYNC_BURST.map(([m, count, p50, p99]) => ({
      t: Date.UTC(2026, 0, 1) + m * 60_000,
      count,
      p50,
      p99,
    }));
    const [c, ...rest] = detectSteps(points, { minRatio: 1.2 });
    expect(rest).toEqual([]);
    expect(c!.index).toBe(96);
    expect(c!.detectedIndex - 96 + 1).toBe(3);
  });

  it('confirms the live spawn-method step (×2.4) on its 3rd point', () => {
    // Recorded by apps/agent/test/live/host.test.ts on a quiet host: the helper's spawn series
    // (~500 spawns a test minute, µs), posix_spawn → fork + per-fd FD_CLOEXEC in its minute
    // 94, so minute 95 is the first whole one. A ×2.4 step was short of the ×3 the 3-point
    // confirmation asked for: its 4th point opened it 4.8 test minutes after the change.
    const points: MinutePoint[] = (
      JSON.parse(readFileSync(new URL('./fixtures/live-spawn.json', import.meta.url), 'utf8')) as [
        number,
        number,
        number,
        number,
      ][]
    ).map(([m, count, p50, p99]) => ({ t: Date.UTC(2026, 0, 1) + m * 60_000, count, p50, p99 }));
    const [c, ...rest] = detectSteps(points, { minRatio: 1.2 });
    expect(rest).toEqual([]);
    expect(c!.index).toBe(95);
    expect(c!.detectedIndex - 95 + 1).toBe(3);
  });

  it('dates a jump at its own start after a tail that rose with another job’s load', () => {
    // The live Nagle pair's gap view (apps/agent/test/live/host.test.ts; ~105 calls a test minute,
    // the callee's change in minute 95): a live run dated its step 7.5 minutes early, at a rise
    // of the p99 to 4–20 ms while another case's change loaded the host, so the caller's gap and
    // client views became two regressions. Here the load is the one a passing run recorded on the
    // same series (its minutes 75–84: p50 ×1.3, p99 2–10×, a few minutes near the jump's
    // midpoint), put just before the change for 3–7 minutes. The jump (~45 ms) is one step,
    // dated within a minute of the change's (not at the load) and confirmed by minute 99.
    // Before: dated 2, 6 and 7 minutes early with 5–7 minutes of load.
    const series = (
      JSON.parse(
        readFileSync(new URL('./fixtures/live-nagle-gap.json', import.meta.url), 'utf8'),
      ) as [number, number, number, number][]
    ).map(([m, count, p50, p99]) => ({ m, count, p50, p99 }));
    const load = [
      [0.854, 4.4],
      [0.871, 4.4],
      [0.837, 3.68],
      [0.871, 20.5],
      [0.789, 5.07],
      [0.925, 6.84],
      [0.837, 5.6],
      [1.15, 16.8],
      [0.944, 6.44],
      [0.907, 8.02],
    ];
    const wrong: string[] = [];
    for (const lead of [3, 4, 5, 6, 7]) {
      const points: MinutePoint[] = series.map(({ m, count, p50, p99 }) => {
        const l = m >= 95 - lead && m < 95 ? load[m - (95 - lead)]! : null;
        return {
          t: Date.UTC(2026, 0, 1) + m * 60_000,
          count,
          p50: l ? l[0]! : p50,
          p99: l ? l[1]! : p99,
        };
      });
      const at = (i: number) => series[i]!.m;
      const found = detectSteps(points, { minRatio: 1.2 }).filter((c) => at(c.index) >= 80);
      const [c] = found;
      if (found.length !== 1 || at(c!.index) < 94 || at(c!.index) > 96 || at(c!.detectedIndex) > 99)
        wrong.push(
          `${lead} min of load: ${found.map((x) => `${x.metric} ${at(x.index)}, ${at(x.detectedIndex)}`).join('; ')}`,
        );
    }
    expect(wrong).toEqual([]);
  });

  it('dates a jump at its own start, not at a smaller move before it (another job’s load, a drift)', () => {
    // The live spawn series (its change in minute 94) with the host's load lifting it ×1.2–1.5
    // for 2–8 minutes before the change, as a step or a ramp, in either quantile or both, and
    // staying there: the regression is the jump, dated in the change's minute or the next, not
    // at the load's start (a live run dated one 5.5 minutes early; 6 of these 144 were, before).
    const spawn = (
      JSON.parse(readFileSync(new URL('./fixtures/live-spawn.json', import.meta.url), 'utf8')) as [
        number,
        number,
        number,
        number,
      ][]
    ).map(([m, count, p50, p99]) => ({ m, count, p50, p99 }));
    const wrong: string[] = [];
    for (const which of ['both', 'p50', 'p99'])
      for (const shape of ['step', 'ramp'])
        for (const f of [1.2, 1.3, 1.4, 1.5])
          for (const lead of [2, 3, 4, 5, 6, 8]) {
            const points: MinutePoint[] = spawn.map(({ m, count, p50, p99 }) => {
              let k = 1;
              if (m >= 95) k = f;
              else if (m >= 95 - lead)
                k = shape === 'step' ? f : 1 + ((f - 1) * (m - (95 - lead) + 1)) / lead;
              return {
                t: Date.UTC(2026, 0, 1) + m * 60_000,
                count,
                p50: which === 'p99' ? p50 : p50 * k,
                p99: which === 'p50' ? p99 : p99 * k,
              };
            });
            const [c] = detectSteps(points, { minRatio: 1.2 });
            if (!c || c.index < 94 || c.index > 95 || c.detectedIndex > 97)
              wrong.push(
                `${which} ${shape} ×${f} ${lead} min early: ${c?.index}, ${c?.detectedIndex}`,
              );
          }
    expect(wrong).toEqual([]);
  });

  it('finds a flat +40 ms on a 1 ms call (the Nagle incident) in both quantiles', () => {
    const points = series({
      seed: 42,
      minutes: 600,
      rate: 60,
      median: 1,
      sigma: 0.3,
      stepAt: 400,
      shift: 40,
    });
    const [c, ...rest] = detectSteps(points);
    expect(rest).toHaveLength(0);
    expect(c).toBeDefined();
    expect(Math.abs(c!.index - firstIndexAtOrAfter(points, 400))).toBeLessThanOrEqual(1);
    expect(c!.metrics).toEqual(['p50', 'p99']);
    expect(c!.metric).toBe('p50');
    expect(c!.ratio).toBeGreaterThan(25);
    expect(c!.before.p50).toBeGreaterThan(0.8);
    expect(c!.before.p50).toBeLessThan(1.25);
    expect(c!.after.p50).toBeGreaterThan(38);
    expect(c!.after.count).toBeGreaterThan(0);
  });

  it('handles the gap view near zero with a floor: no alarms on noise around 0.1 ms, a clear +40 ms jump', () => {
    const quiet = series({
      seed: 3,
      minutes: 1500,
      rate: 30,
      median: 0.1,
      sigma: 0.9,
      spikes: 0.003,
    });
    expect(detectSteps(quiet, { floor: 1 })).toHaveLength(0);
    const jump = series({
      seed: 4,
      minutes: 800,
      rate: 30,
      median: 0.1,
      sigma: 0.9,
      stepAt: 500,
      shift: 40,
    });
    const changes = detectSteps(jump, { floor: 1 });
    expect(changes).toHaveLength(1);
    expect(changes[0]!.direction).toBe('regression');
    expect(changes[0]!.after.p50).toBeGreaterThan(39);
    expect(Number.isFinite(changes[0]!.ratio)).toBe(true);
  });

  it('sees a slow tail that only the p99 shows (the spawn-after-idle incident)', () => {
    // 10% of events become 20× slower: p50 barely moves, p99 jumps.
    const base = series({ seed: 9, minutes: 700, rate: 200, median: 200, sigma: 0.4 });
    const r = rng(10);
    const points = base.map((p, i) =>
      i >= 450 ? { ...p, p99: p.p99 * 20 * (0.8 + 0.4 * r.next()) } : p,
    );
    const changes = detectSteps(points);
    expect(changes).toHaveLength(1);
    expect(changes[0]!.metric).toBe('p99');
    expect(changes[0]!.metrics).toEqual(['p99']);
    expect(Math.abs(changes[0]!.index - 450)).toBeLessThanOrEqual(2);
  });

  it('finds a 10× step in a sparse series (2 events per minute), later but on the right minute', () => {
    const points = series({
      seed: 5,
      minutes: 1000,
      rate: 2,
      median: 50,
      sigma: 0.7,
      stepAt: 600,
      factor: 10,
    });
    const truth = firstIndexAtOrAfter(points, 600);
    const changes = detectSteps(points);
    expect(changes).toHaveLength(1);
    expect(Math.abs(changes[0]!.index - truth)).toBeLessThanOrEqual(5);
    expect(changes[0]!.detectedIndex - truth).toBeLessThan(20);
  });

  it('sees a slow tail in a sparse series (4 events a minute) that shows in only a sixth of the minutes', () => {
    // A slower 5% of events (×300): with ~4 events a minute the minute's
    // "p99" (its maximum) carries it in about one minute in six, and p50
    // not at all. Without a step, the same series stay quiet.
    const tailSeries = (seed: number, tail: number) =>
      slowTailSeries(seed, { rate: 4, sigma: 0.6, tail, appears: true });
    let found = 0;
    let near = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const { points, truth } = tailSeries(seed, 300);
      const changes = detectSteps(points);
      expect(changes.length).toBeLessThanOrEqual(1);
      expect(detectSteps(tailSeries(seed, 1).points)).toEqual([]);
      if (!changes.length) continue;
      const c = changes[0]!;
      expect(c.metric).toBe('p99');
      expect(c.direction).toBe('regression');
      found++;
      if (Math.abs(c.index - truth) <= 5) near++;
      // The onset interval covers the step, and it is reported within ~80 minutes.
      expect(Math.abs(c.index - truth)).toBeLessThanOrEqual(c.onsetUncertaintyPoints + 1);
      expect(c.detectedIndex - truth).toBeLessThan(90);
      // Incrementally, through JSON state, the same change.
      expect(detectInChunks(points, 97)).toEqual(changes);
    }
    expect(found).toBeGreaterThanOrEqual(11);
    expect(near).toBeGreaterThanOrEqual(9);
  });

  it('sees a slow tail that showed in half the minutes go away (16 events a minute), as a p99 improvement on the right minute', () => {
    // Before the fix a slower 5% of events (×100) shows in the "p99" (the
    // maximum) of about half the minutes; after it, in none. The other
    // minutes do not change, so a rank sum sees only half the step (the
    // test of how few new minutes still reach the history's top 30% sees
    // all of it). Without a fix, the same series stay quiet.
    const vanishing = (seed: number, tail: number) =>
      slowTailSeries(seed, { rate: 16, sigma: 0.5, tail, appears: false });
    let near = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const { points, truth } = vanishing(seed, 100);
      expect(detectSteps(vanishing(seed, 1).points)).toEqual([]);
      const changes = detectSteps(points);
      expect(changes.length).toBeLessThanOrEqual(1);
      if (!changes.length) continue;
      const c = changes[0]!;
      expect(c.metric).toBe('p99');
      expect(c.direction).toBe('improvement');
      expect(c.ratio).toBeLessThan(0.9);
      if (Math.abs(c.index - truth) <= 5) near++;
    }
    expect(near).toBeGreaterThanOrEqual(9);
  });

  it('finds a 1.3× step in a calm sparse series (5 events a minute) that a 120-point window cannot confirm', () => {
    // 0.26 in log units against a per-minute sd of ~0.35: the CUSUMs'
    // baseline absorbs it and 120 points a side cannot confirm it; the long
    // scan (480 points before) can. Chunked delivery through JSON state
    // (which carries the long history) gives the same changes. The same
    // series with a daily cycle instead of a step mostly stay quiet: at 5
    // events a minute a ±0.3 cycle is barely visible against the noise, so
    // the calm gate lets some through (the evaluation measures the rate).
    let found = 0;
    let cycleAlarms = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const spec = { seed, minutes: 1600, rate: 5, median: 30, sigma: 0.6 };
      const points = series({ ...spec, stepAt: 1000, factor: 1.3 });
      const truth = firstIndexAtOrAfter(points, 1000);
      const changes = detectSteps(points);
      expect(changes.length).toBeLessThanOrEqual(1);
      cycleAlarms += detectSteps(series({ ...spec, diurnal: 0.3, trafficSwing: 0.5 })).length;
      if (!changes.length) continue;
      const c = changes[0]!;
      expect(c.direction).toBe('regression');
      expect(c.ratio).toBeGreaterThan(1.1);
      // Small steps in sparse series are placed less tightly than large ones.
      expect(Math.abs(c.index - truth)).toBeLessThanOrEqual(12);
      found++;
      expect(detectInChunks(points, 131)).toEqual(changes);
    }
    // (Without the long scan: 5 of 10.)
    expect(found).toBeGreaterThanOrEqual(7);
    expect(cycleAlarms).toBeLessThanOrEqual(2);
  });

  it('answers in a short series (a new endpoint): a ×3 step after 12 points, found from 6 points after it', () => {
    let found = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const pts = series({
        seed,
        minutes: 20,
        rate: 50,
        median: 10,
        sigma: 0.4,
        stepAt: 12,
        factor: 3,
      });
      const ch = detectSteps(pts, { minRatio: 1.2 }).filter((c) => c.direction === 'regression');
      if (ch.some((c) => Math.abs(c.index - 12) <= 2)) found++;
      // Never anything else in so few points.
      expect(ch.every((c) => Math.abs(c.index - 12) <= 5)).toBe(true);
    }
    expect(found).toBeGreaterThanOrEqual(8);
  });

  it('stays quiet in the first minutes of short calm series', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const pts = series({ seed: 100 + seed, minutes: 30, rate: 3 + seed, median: 5, sigma: 0.6 });
      expect(detectSteps(pts, { minRatio: 1.2 })).toEqual([]);
    }
  });

  it('finds moderate steps (×1.25 and ×0.8) in calm dense series with minRatio 1.2', () => {
    let found = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const factor = seed % 2 ? 1.25 : 0.8;
      const pts = series({
        seed: 300 + seed,
        minutes: 400,
        rate: 100,
        median: 20,
        sigma: 0.4,
        stepAt: 250,
        factor,
      });
      const ch = detectSteps(pts, { minRatio: 1.2 });
      const dir = factor > 1 ? 'regression' : 'improvement';
      if (ch.some((c) => Math.abs(c.index - 250) <= 5 && c.direction === dir)) found++;
      expect(ch.every((c) => Math.abs(c.index - 250) <= 5)).toBe(true);
    }
    expect(found).toBeGreaterThanOrEqual(9);
  });

  it('indexes into the array given, counting minutes without data', () => {
    const points = series({
      seed: 11,
      minutes: 700,
      rate: 50,
      median: 5,
      sigma: 0.5,
      stepAt: 500,
      factor: 5,
    });
    const truth = firstIndexAtOrAfter(points, 500);
    // Interleave empty minutes (count 0) and a non-finite one: they keep their index but carry no data.
    const padded: MinutePoint[] = [];
    const position: number[] = [];
    for (const p of points) {
      padded.push({ t: p.t - 30_000, count: 0, p50: 0, p99: 0 });
      position.push(padded.length);
      padded.push(p);
    }
    padded.splice(10, 0, { t: points[4]!.t + 1, count: 3, p50: NaN, p99: NaN });
    const changes = detectSteps(padded);
    expect(changes).toHaveLength(1);
    const expected = position[truth]! + (position[truth]! >= 10 ? 1 : 0);
    expect(changes[0]!.index).toBe(expected);
    expect(changes[0]!.t).toBe(points[truth]!.t);
  });
});

describe('detectSteps: no alarms without a step', () => {
  it('stays quiet on heavy-tailed noise with isolated spikes, missing minutes and diurnal swings in latency and traffic', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.constantFrom(1.5, 4, 20, 100, 300),
        fc.double({ min: 0, max: 0.35, noNaN: true }),
        fc.double({ min: 0, max: 0.7, noNaN: true }),
        (seed, rate, diurnal, trafficSwing) => {
          const points = series({
            seed,
            minutes: 2200,
            rate,
            median: 20,
            sigma: 0.8,
            diurnal,
            trafficSwing,
            spikes: 0.005,
            missing: 0.05,
            heavy: 0.01,
          });
          expect(detectSteps(points)).toEqual([]);
        },
      ),
      { numRuns: 12, seed: SEED },
    );
  });

  it('does not turn a single spike (even 1000×) into a change', () => {
    const points = series({ seed: 21, minutes: 600, rate: 100, median: 5, sigma: 0.4 });
    points[400] = { ...points[400]!, p50: points[400]!.p50 * 1000, p99: points[400]!.p99 * 1000 };
    points[401] = { ...points[401]!, p50: points[401]!.p50 * 500, p99: points[401]!.p99 * 500 };
    expect(detectSteps(points)).toEqual([]);
  });
});

describe('incremental detection', () => {
  it('gives the same changes in any chunking, through a JSON round trip of the state', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 12 }),
        (seed, chunks) => {
          const points = series({
            seed,
            minutes: 1500,
            rate: 15,
            median: 8,
            sigma: 0.7,
            stepAt: 700,
            factor: 3,
            spikes: 0.004,
            diurnal: 0.2,
            trafficSwing: 0.5,
          });
          const once = detectSteps(points);
          const got: StepChange[] = [];
          let state: DetectorStateJSON | undefined;
          let at = 0;
          for (let k = 0; at < points.length; k++) {
            const size = chunks[k % chunks.length]!;
            const r = detectStepsIncremental(state, points.slice(at, at + size));
            state = JSON.parse(JSON.stringify(r.state)) as DetectorStateJSON;
            got.push(...r.changes);
            at += size;
          }
          expect(got).toEqual(once);
          expect(state!.n).toBe(points.length);
        },
      ),
      { numRuns: 25, seed: SEED },
    );
  });

  it('keeps its state small and ignores points it has already seen', () => {
    const points = series({ seed: 8, minutes: 3000, rate: 40, median: 3, sigma: 0.5 });
    const d = new StepDetector();
    d.pushAll(points);
    const json = JSON.stringify(d.toJSON());
    expect(json.length).toBeLessThan(40_000);
    // Re-delivered (not newer) minutes are ignored but still advance the index.
    const before = d.toJSON();
    expect(d.push(points[points.length - 1]!)).toEqual([]);
    const after = d.toJSON();
    expect(after.n).toBe(before.n + 1);
    expect(after.ring).toEqual(before.ring);
  });

  it('restored from a state without the long p50 history, scans only what it has (no false steps)', () => {
    // A state written before the long scan existed, or one that kept less
    // of the history: the missing part must not be read as zeros.
    let alarms = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const points = series({ seed, minutes: 2500, rate: 5, median: 30, sigma: 0.6 });
      const d = new StepDetector();
      d.pushAll(points.slice(0, 1500));
      const { long: _long, ...withoutLong } = d.toJSON();
      const restored = StepDetector.fromJSON(withoutLong);
      alarms += restored.pushAll(points.slice(1500)).length + d.pushAll(points.slice(1500)).length;
      // What it writes back covers only what it has seen since.
      expect(restored.toJSON().long!.t.length).toBeLessThanOrEqual(1000);
    }
    expect(alarms).toBe(0);
  });

  it('keeps the long scan inside a small ring (small beforePoints/maxAfterPoints)', () => {
    for (let seed = 1; seed <= 4; seed++) {
      const points = series({
        seed,
        minutes: 3000,
        rate: 5,
        median: 30,
        sigma: 0.6,
        stepAt: 1800,
        factor: 1.3,
      });
      for (const opts of [
        { beforePoints: 60, maxAfterPoints: 40 },
        { beforePoints: 8, maxAfterPoints: 4 },
      ]) {
        // Whatever is reported is a regression placed near the step, never a "regression" with ratio < 1.
        for (const c of detectSteps(points, opts)) {
          expect(c.direction === 'regression' ? c.ratio > 1 : c.ratio < 1).toBe(true);
          expect(Math.abs(c.index - firstIndexAtOrAfter(points, 1800))).toBeLessThanOrEqual(60);
        }
      }
    }
  });

  it('rejects invalid options and foreign state', () => {
    expect(() => new StepDetector({ minRatio: 0.5 })).toThrow(RangeError);
    expect(() => new StepDetector({ alpha: 2 })).toThrow(RangeError);
    expect(() => new StepDetector({ floor: -1 })).toThrow(RangeError);
    expect(() => StepDetector.fromJSON({ v: 2 } as unknown as DetectorStateJSON)).toThrow();
  });
});

describe('stepRecovery', () => {
  const points = series({
    seed: 31,
    minutes: 900,
    rate: 60,
    median: 10,
    sigma: 0.5,
    stepAt: 300,
    factor: 4,
  });
  const change = detectSteps(points.slice(0, 400))[0]!;

  it('is not resolved while latency stays up', () => {
    expect(change.direction).toBe('regression');
    const rec = stepRecovery(change, points.slice(360, 400));
    expect(rec.resolved).toBe(false);
    expect(rec.recovered).toBeLessThan(0.3);
  });

  it('is resolved once latency is back at the before level', () => {
    const back = series({ seed: 32, minutes: 40, rate: 60, median: 10, sigma: 0.5 });
    const rec = stepRecovery(change, back);
    expect(rec.resolved).toBe(true);
    expect(rec.recovered).toBeGreaterThan(0.75);
    expect(rec.level).toBeGreaterThan(7);
    expect(rec.level).toBeLessThan(14);
  });

  it('needs enough points and more than a quiet minute or two', () => {
    const back = series({ seed: 33, minutes: 5, rate: 60, median: 10, sigma: 0.5 });
    expect(stepRecovery(change, back).resolved).toBe(false);
    const mixed = [
      ...series({ seed: 34, minutes: 10, rate: 60, median: 10, sigma: 0.5 }),
      ...points.slice(380, 400),
    ];
    expect(stepRecovery(change, mixed).resolved).toBe(false);
  });
});
