/**
 * Tail collapses (docs/detection.md "Tail collapses", tail-collapse.ts): a
 * noisy p99 that settles onto a steady, higher band — the caller's view of a
 * delayed ACK — reported as a floor with its band, and what must not be one.
 */
import { mulberry32Open } from '@onset/testkit/random';
import { describe, expect, it } from 'vitest';
import {
  bucketIndex,
  bucketValue,
  burstVerdict,
  detectSteps,
  StepDetector,
  stepRecovery,
  type MinutePoint,
} from '../src/index.ts';
import { betaBinomialCdf } from '../src/detect/tail-collapse.ts';

const T0 = Date.UTC(2026, 10, 1);
const MIN = 60_000;

interface Caller {
  calls: number;
  /** The caller's own stalls: share of calls and their lognormal median (ms). */
  stallShare: number;
  stallMs: number;
  /** Share of calls that wait the delayed-ACK timer from minute `at` on (0: no change). */
  ackShare: number;
  at: number;
  /** Calls per minute from minute `at` on (default: unchanged). */
  callsAfter?: number;
}

/**
 * A caller's client view, event by event: each call is the callee's time,
 * plus the caller's own stall for a few, plus (after the change) the ACK
 * timer for a share; p50/p99 read as the histograms do (rank ceil(q·n),
 * bucket values).
 */
function callerView(c: Caller, minutes: number, seed: number): MinutePoint[] {
  const u = mulberry32Open(seed);
  const z = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  const out: MinutePoint[] = [];
  for (let m = 0; m < minutes; m++) {
    const n = m >= c.at && c.callsAfter ? c.callsAfter : c.calls;
    const xs: number[] = [];
    for (let i = 0; i < n; i++) {
      let ms = u() < 0.05 ? 8 + 12 * u() : 1 + 2 * u();
      if (u() < c.stallShare) ms += c.stallMs * Math.exp(0.6 * z());
      if (m >= c.at && u() < c.ackShare) ms += 40 + 4 * u();
      xs.push(bucketValue(bucketIndex(ms * 1000)) / 1000);
    }
    xs.sort((a, b) => a - b);
    const at = (q: number) => xs[Math.max(1, Math.ceil(q * n)) - 1]!;
    out.push({ t: T0 + m * MIN, count: n, p50: at(0.5), p99: at(0.99) });
  }
  return out;
}

const opts = { minRatio: 1.2 };

describe('tail collapses', () => {
  it('a delayed ACK on 8 % of calls: the p99 settles at ~45 ms, reported as a floor at the change', () => {
    let found = 0;
    for (const seed of [1, 2, 3, 4, 5]) {
      const pts = callerView(
        { calls: 100, stallShare: 0.03, stallMs: 40, ackShare: 0.08, at: 300 },
        420,
        seed,
      );
      const cs = detectSteps(pts, opts);
      const floor = cs.find((c) => c.shape === 'floor');
      if (!floor) continue;
      found++;
      expect(floor.direction).toBe('regression');
      expect(floor.metric).toBe('p99');
      expect(Math.abs(floor.index - 300)).toBeLessThanOrEqual(5);
      expect(floor.ratios.p50).toBeLessThan(1.15);
      // The band: every minute's p99 just above the timer now, over a wide range before.
      const band = floor.band!;
      expect(band.after[0]).toBeGreaterThan(40);
      expect(band.after[1]).toBeLessThan(60);
      expect(band.after[1] - band.after[0]).toBeLessThan((band.before[1] - band.before[0]) / 2);
      // Nothing else opened around it.
      expect(cs.filter((c) => c !== floor && Math.abs(c.index - 300) < 60)).toEqual([]);
      // Confirmed within the windows it tests (32-96 points after the onset).
      expect(floor.detectedIndex - floor.index).toBeLessThan(100);
    }
    expect(found).toBeGreaterThanOrEqual(4);
  });

  it('is found the same fed point by point through the stored state', () => {
    const pts = callerView(
      { calls: 100, stallShare: 0.03, stallMs: 40, ackShare: 0.08, at: 300 },
      420,
      1,
    );
    const whole = detectSteps(pts, opts);
    let det = new StepDetector(opts);
    const inc = [];
    for (let i = 0; i < pts.length; i += 7) {
      inc.push(...det.pushAll(pts.slice(i, i + 7)));
      det = StepDetector.fromJSON(JSON.parse(JSON.stringify(det.toJSON())));
    }
    expect(inc).toEqual(whole);
    expect(whole.some((c) => c.shape === 'floor')).toBe(true);
  });

  it('the same caller without a change, or with more calls a minute, reports no floor', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const still = callerView(
        { calls: 100, stallShare: 0.03, stallMs: 40, ackShare: 0, at: 300 },
        1440,
        seed,
      );
      expect(detectSteps(still, opts)).toEqual([]);
      // Three times the traffic: each minute's p99 is steadier (more calls, same law), not a floor.
      const busier = callerView(
        { calls: 60, stallShare: 0.03, stallMs: 40, ackShare: 0, at: 300, callsAfter: 180 },
        420,
        seed,
      );
      expect(detectSteps(busier, opts).filter((c) => c.shape === 'floor')).toEqual([]);
    }
  });

  it('a floor is over when the p99 leaves its band, whatever its median does; never a burst', () => {
    const pts = callerView(
      { calls: 100, stallShare: 0.03, stallMs: 40, ackShare: 0.08, at: 300 },
      420,
      1,
    );
    const floor = detectSteps(pts, opts).find((c) => c.shape === 'floor')!;
    expect(floor).toBeDefined();
    // Still on the band: not recovered.
    expect(stepRecovery(floor, pts.slice(-30)).resolved).toBe(false);
    expect(burstVerdict(floor, pts.slice(floor.index)).over).toBe(false);
    // The fix: the same caller without the wait again.
    const fixed = callerView(
      { calls: 100, stallShare: 0.03, stallMs: 40, ackShare: 0, at: 0 },
      30,
      9,
    );
    const r = stepRecovery(floor, fixed);
    expect(r.resolved).toBe(true);
    expect(r.points).toBe(30);
  });
});

describe('betaBinomialCdf', () => {
  it('matches the uniform case and a direct sum', () => {
    // Beta(1, 1) is uniform: C is uniform on 0..n.
    for (const c of [0, 3, 10]) expect(betaBinomialCdf(c, 10, 1, 1)).toBeCloseTo((c + 1) / 11, 12);
    // Direct: P(C = x) = C(n, x) B(x + a, n - x + b) / B(a, b), with B from factorials.
    const f = (k: number): number => (k <= 1 ? 1 : k * f(k - 1));
    const B = (a: number, b: number) => (f(a - 1) * f(b - 1)) / f(a + b - 1);
    const C = (n: number, k: number) => f(n) / (f(k) * f(n - k));
    let sum = 0;
    for (let x = 0; x <= 4; x++) sum += (C(12, x) * B(x + 3, 12 - x + 5)) / B(3, 5);
    expect(betaBinomialCdf(4, 12, 3, 5)).toBeCloseTo(sum, 12);
    expect(betaBinomialCdf(12, 12, 3, 5)).toBe(1);
    expect(betaBinomialCdf(-1, 12, 3, 5)).toBe(0);
  });
});
