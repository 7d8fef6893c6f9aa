import { describe, expect, it } from 'vitest';
import { mulberry32 } from '@onset/testkit/random';
import {
  bucketValue,
  bucketIndex,
  chooseMethod,
  Histogram,
  judgeRow,
  judgeVerdict,
  mannWhitneyHistograms,
  quantileEstimate,
  quantileRatio,
  SIDE_NAMES,
  tailTest,
  VERDICT_DEFAULTS,
  type VerdictSeriesInput,
} from '../src/index.ts';
import { mannWhitneyGreater } from '../src/detect/stats.ts';

const MIN = 60_000;

/** n log-normal calls (µs) with this median, the slowest `tailShare` of them × `tailFactor`. */
function calls(
  rand: () => number,
  n: number,
  medianUs: number,
  o: { tail?: number; factor?: number } = {},
) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const u = Math.max(1e-12, rand());
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
    let v = medianUs * Math.exp(0.3 * z);
    if (o.tail !== undefined && z > o.tail) v *= o.factor ?? 1;
    out.push(v);
  }
  return out;
}
const hist = (values: number[]) => {
  const h = new Histogram();
  for (const v of values) h.record(v);
  return h;
};

describe('Mann-Whitney on histograms', () => {
  it('agrees with the sample test on the bucketed values', () => {
    const rand = mulberry32(1);
    const a = calls(rand, 400, 20_000);
    const b = calls(rand, 500, 21_000);
    const bucketed = (xs: number[]) => xs.map((v) => bucketValue(bucketIndex(v)));
    const fromHist = mannWhitneyHistograms(hist(a), hist(b)).pValue;
    const fromSamples = mannWhitneyGreater(bucketed(a), bucketed(b));
    expect(fromHist).toBeCloseTo(fromSamples, 6);
  });

  it('finds a ×1.3 shift and gives its effect size; same distributions stay quiet', () => {
    const rand = mulberry32(2);
    const slow = mannWhitneyHistograms(
      hist(calls(rand, 1000, 26_000)),
      hist(calls(rand, 3000, 20_000)),
    );
    expect(slow.pValue).toBeLessThan(1e-10);
    expect(slow.probSlower).toBeGreaterThan(0.7);
    let small = 0;
    for (let t = 0; t < 100; t++)
      if (
        mannWhitneyHistograms(hist(calls(rand, 300, 20_000)), hist(calls(rand, 300, 20_000)))
          .pValue < 0.01
      )
        small++;
    expect(small).toBeLessThanOrEqual(4);
  });

  it('says nothing when every call is in one bucket or a side is empty', () => {
    const one = hist(Array(50).fill(1000));
    expect(mannWhitneyHistograms(one, hist(Array(80).fill(1000)))).toEqual({
      pValue: 1,
      probSlower: 0.5,
    });
    expect(mannWhitneyHistograms(new Histogram(), one).pValue).toBe(1);
  });
});

describe('the tail test', () => {
  it('sees the slowest 3 % slow down ×3 where Mann-Whitney hardly moves', () => {
    const rand = mulberry32(3);
    const base = hist(calls(rand, 5000, 20_000));
    const cand = hist(calls(rand, 5000, 20_000, { tail: 1.88, factor: 3 }));
    expect(tailTest(cand, base).pValue).toBeLessThan(1e-6);
    expect(mannWhitneyHistograms(cand, base).pValue).toBeGreaterThan(0.001);
  });
});

describe('quantile ratio intervals', () => {
  it('cover the true ratio about 95 % of the time', () => {
    const rand = mulberry32(4);
    let covered50 = 0;
    let covered99 = 0;
    const trials = 200;
    for (let t = 0; t < trials; t++) {
      const c = hist(calls(rand, 800, 26_000));
      const b = hist(calls(rand, 2400, 20_000));
      const r50 = quantileRatio(quantileEstimate(c, 0.5)!, quantileEstimate(b, 0.5)!);
      const r99 = quantileRatio(quantileEstimate(c, 0.99)!, quantileEstimate(b, 0.99)!);
      if (r50.low <= 1.3 && 1.3 <= r50.high) covered50++;
      if (r99.low <= 1.3 && 1.3 <= r99.high) covered99++;
    }
    expect(covered50 / trials).toBeGreaterThan(0.88);
    expect(covered99 / trials).toBeGreaterThan(0.85);
    expect(covered50 / trials).toBeLessThan(1);
  });
});

const row = (c: number[], b: number[], drift: number[] | null = null, over = {}) =>
  judgeRow({
    candidate: hist(c),
    baseline: hist(b),
    drift: drift ? hist(drift) : null,
    floorUs: 0,
    settings: { ...VERDICT_DEFAULTS, ...over },
    alpha: 0.01,
    sides: SIDE_NAMES.canary,
  });

describe('judgeRow', () => {
  const rand = mulberry32(5);
  it('fails a ×1.3 slowdown with its numbers', () => {
    const r = row(calls(rand, 1200, 26_000), calls(rand, 3600, 20_000));
    expect(r.verdict).toBe('fail');
    expect(r.p50Ratio!.value).toBeGreaterThan(1.2);
    expect(r.p50Ratio!.low).toBeGreaterThan(1.1);
    expect(r.candidate.p50).toBeGreaterThan(24);
    expect(r.baseline.count).toBe(3600);
    expect(r.reason).toMatch(/^p50 ×1\.[23]\d* \[.*\] ≥ ×1\.1 on the canary hosts \(p = /);
  });

  it('passes a harmless change', () => {
    const r = row(calls(rand, 1200, 20_300), calls(rand, 3600, 20_000));
    expect(r.verdict).toBe('pass');
    expect(r.reason).toContain('under ×1.1 / ×1.2');
  });

  it('is inconclusive, never pass, below the minimum of calls, even when nothing moved', () => {
    const r = row(calls(rand, 50, 20_000), calls(rand, 150, 20_000));
    expect(r.verdict).toBe('inconclusive');
    expect(r.lowTraffic).toBe(true);
    expect(r.reason).toBe(
      'too few calls to judge: 50 calls on the canary hosts, 150 on the other hosts (300 needed a side)',
    );
    // The numbers are still shown.
    expect(r.p50Ratio).not.toBeNull();
  });

  it('is inconclusive when a reached effect is not significant', () => {
    // p99 ×1.5 on 5 calls of 310: the tail test gives p ≈ 0.013, not under 0.01.
    const r = row([...Array(305).fill(20_000), ...Array(5).fill(30_000)], Array(310).fill(20_000));
    expect(r.verdict).toBe('inconclusive');
    expect(r.lowTraffic).toBe(false);
    expect(r.p99Ratio!.value).toBeCloseTo(1.5, 1);
    expect(r.reason).toMatch(
      /^p99 ×1\.5 \[.*\] reaches ×1\.2 but the test does not confirm it \(p = 0\.01\d*\)$/,
    );
  });

  it('takes thresholds: ×1.3 passes with p50_ratio 1.5 and p99_ratio 1.5', () => {
    expect(
      row(calls(rand, 1200, 26_000), calls(rand, 3600, 20_000), null, {
        p50Ratio: 1.5,
        p99Ratio: 1.5,
      }).verdict,
    ).toBe('pass');
  });

  it('drift guard: a series already rising before the deploy is not failed on it', () => {
    const r = row(calls(rand, 1200, 26_000), calls(rand, 1200, 22_000), calls(rand, 1200, 18_000));
    expect(r.verdict).toBe('inconclusive');
    expect(r.reason).toMatch(/already rising before the deploy \(p50 ×1\.\d+/);
    expect(
      row(calls(rand, 1200, 26_000), calls(rand, 1200, 20_000), calls(rand, 1200, 20_000)).verdict,
    ).toBe('fail');
  });
});

describe('chooseMethod', () => {
  it('canary for a strict subset of the hosts, before_after otherwise', () => {
    const hosts = ['a', 'b', 'c', 'd'];
    expect(chooseMethod(['b', 'a'], hosts, 'checkout')).toEqual({
      method: 'canary',
      canaryHosts: ['a', 'b'],
      baselineHosts: ['c', 'd'],
      reason:
        'the marker names 2 of the 4 hosts of checkout: those against the other 2 over the same minutes',
    });
    expect(chooseMethod([], hosts, 'checkout').method).toBe('before_after');
    expect(chooseMethod(hosts, hosts, 'checkout').reason).toMatch(
      /^the marker names every host of checkout/,
    );
    expect(chooseMethod(['z'], hosts, 'checkout').reason).toMatch(
      /^none of the marker's hosts report checkout/,
    );
  });
});

describe('judgeVerdict', () => {
  const W = 10;
  /** Per-minute histograms: `n` calls a minute at `medianUs`, × factor from minute `from`. */
  const minutes = (rand: () => number, n: number, medianUs: number, factor = 1, from = 0) =>
    Array.from({ length: W }, (_, m) =>
      hist(calls(rand, n, m >= from ? medianUs * factor : medianUs)),
    );
  const run = (
    series: VerdictSeriesInput<string>[],
    settledMinutes: number,
    regressions: { reason: string }[] = [],
  ) =>
    judgeVerdict({
      method: 'canary',
      series,
      settings: VERDICT_DEFAULTS,
      settledMinutes,
      regressions,
      label: (k) => k,
    });

  it('fails at the first look that shows it, pending before, naming the series', () => {
    const rand = mulberry32(6);
    const series = [
      {
        key: 'GET /cart',
        floorUs: 0,
        candidate: minutes(rand, 200, 20_000, 1.3),
        baseline: minutes(rand, 600, 20_000),
        drift: null,
      },
      {
        key: 'GET /home',
        floorUs: 0,
        candidate: minutes(rand, 200, 20_000),
        baseline: minutes(rand, 600, 20_000),
        drift: null,
      },
    ];
    const early = run(series, 2);
    expect(early.outcome).toBe('pending');
    expect(early.rows.every((r) => r.verdict === 'pending')).toBe(true);
    const v = run(series, 5);
    expect(v).toMatchObject({ outcome: 'fail', decidedAtMinutes: 3, judgedMinutes: 3 });
    expect(v.reason).toMatch(/^GET \/cart: p50 ×1\.3/);
    expect(v.rows.map((r) => [r.key, r.verdict])).toEqual([
      ['GET /cart', 'fail'],
      ['GET /home', 'pending'],
    ]);
  });

  it('passes only at the end of the window', () => {
    const rand = mulberry32(7);
    const series = [
      {
        key: 's',
        floorUs: 0,
        candidate: minutes(rand, 200, 20_000),
        baseline: minutes(rand, 600, 20_000),
        drift: null,
      },
    ];
    expect(run(series, 9).outcome).toBe('pending');
    const v = run(series, 10);
    expect(v).toMatchObject({ outcome: 'pass', decidedAtMinutes: 10 });
    expect(v.reason).toBe('1 series within ×1.1 on p50 and ×1.2 on p99');
  });

  it('a low-traffic series alone is inconclusive; beside a judged one it does not block a pass', () => {
    const rand = mulberry32(8);
    const quiet = {
      key: 'quiet',
      floorUs: 0,
      candidate: minutes(rand, 5, 20_000),
      baseline: minutes(rand, 5, 20_000),
      drift: null,
    };
    const busy = {
      key: 'busy',
      floorUs: 0,
      candidate: minutes(rand, 200, 20_000),
      baseline: minutes(rand, 600, 20_000),
      drift: null,
    };
    const alone = run([quiet], 10);
    expect(alone.outcome).toBe('inconclusive');
    expect(alone.reason).toMatch(
      /^no series had enough calls: quiet: too few calls to judge: 50 calls/,
    );
    const both = run([quiet, busy], 10);
    expect(both.outcome).toBe('pass');
    expect(both.reason).toContain('1 more had too few calls to judge');
    expect(run([], 10)).toMatchObject({
      outcome: 'inconclusive',
      reason: 'no series this deploy can affect had calls in the window',
    });
  });

  it('an open regression naming the deploy fails it, even while the window is open', () => {
    const rand = mulberry32(9);
    const series = [
      {
        key: 's',
        floorUs: 0,
        candidate: minutes(rand, 200, 20_000),
        baseline: minutes(rand, 600, 20_000),
        drift: null,
      },
    ];
    for (const settled of [1, 10])
      expect(run(series, settled, [{ reason: 'regression 4' }])).toMatchObject({
        outcome: 'fail',
        byRegression: true,
        reason: 'an open regression names this deploy its top suspect: regression 4',
      });
  });

  it('before_after: a fixed baseline, the window judged as it fills', () => {
    const rand = mulberry32(10);
    const v = judgeVerdict({
      method: 'before_after',
      series: [
        {
          key: 's',
          floorUs: 0,
          candidate: minutes(rand, 100, 20_000, 2),
          baseline: hist(calls(rand, 1000, 20_000)),
          drift: hist(calls(rand, 1000, 20_000)),
        },
      ],
      settings: VERDICT_DEFAULTS,
      settledMinutes: 10,
      regressions: [],
      label: (k) => k,
    });
    expect(v).toMatchObject({ outcome: 'fail', decidedAtMinutes: 3 });
    expect(v.rows[0]!.judgement.reason).toContain('after the deploy');
    expect(v.rows[0]!.judgement.candidate.count).toBe(300);
  });
});

void MIN;
