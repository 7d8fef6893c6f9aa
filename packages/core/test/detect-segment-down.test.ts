/**
 * Steps down confirmed by the segmentation where the rank tests cannot
 * (segment-down.ts; docs/detection.md "Steps down by the segmentation"), on
 * the real series that motivated the rule (fixtures/tcpd-segments.json,
 * TCPD): seatbelts (UK road casualties: a ×0.71 drop at 169 inside a seasonal
 * cycle that the rank tests' margin eats),
 * lga_passengers (the ×0.61 fall of 2001) and centralia (15 points, a ×0.03
 * collapse at 12 with 3 points after it: no rank test reaches α).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectOptionsFor, detectSteps, type MinutePoint } from '../src/index.ts';

const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/tcpd-segments.json', import.meta.url), 'utf8'),
) as {
  series: Record<string, { values: Array<number | null>; annotations: Record<string, number[]> }>;
};
const T0 = Date.UTC(2026, 0, 1);
/** One observation is one minute of one event (as eval:realdata feeds them); `map` transforms a value. */
function points(name: string, map = (v: number) => v): MinutePoint[] {
  return fixture.series[name]!.values.map((v, i) =>
    v === null || !(v > 0)
      ? { t: T0 + i * 60_000, count: 0, p50: NaN, p99: NaN }
      : { t: T0 + i * 60_000, count: 1, p50: map(v), p99: map(v) },
  );
}
const annotated = (name: string) => [
  ...new Set(Object.values(fixture.series[name]!.annotations).flat()),
];
const near = (i: number, xs: number[], w = 5) => xs.some((x) => Math.abs(x - i) <= w);
const opts = detectOptionsFor('client');

describe('steps down by the segmentation', () => {
  it('seatbelts: the ×0.71 fall at 169 is reported as an improvement at 169; nothing unmarked', () => {
    const ch = detectSteps(points('seatbelts'), opts);
    const downs = ch.filter((c) => c.direction === 'improvement');
    expect(downs.some((c) => c.index === 169)).toBe(true);
    expect(ch.every((c) => near(c.index, annotated('seatbelts')))).toBe(true);
    expect(ch.filter((c) => c.direction === 'regression')).toEqual([]);
  });

  it('lga_passengers: the fall of 2001 (×0.61 at 296) is reported', () => {
    const downs = detectSteps(points('lga_passengers'), opts).filter(
      (c) => c.direction === 'improvement',
    );
    expect(downs.some((c) => Math.abs(c.index - 296) <= 2)).toBe(true);
  });

  it('centralia: a 15-point series gets its collapse at 12', () => {
    const ch = detectSteps(points('centralia'), opts);
    expect(ch).toHaveLength(1);
    expect(ch[0]!.direction).toBe('improvement');
    expect(Math.abs(ch[0]!.index - 12)).toBeLessThanOrEqual(1);
    expect(ch[0]!.ratio).toBeLessThan(0.2);
  });

  it('is for steps down only: the same series turned upside down opens no regression at those falls', () => {
    const up = detectSteps(
      points('seatbelts', (v) => 1e6 / v),
      opts,
    ).filter((c) => c.direction === 'regression');
    expect(up.filter((c) => near(c.index, [60, 169]))).toEqual([]);
    const young = detectSteps(
      points('centralia', (v) => 1e6 / v),
      opts,
    ).filter((c) => c.direction === 'regression');
    expect(young).toEqual([]);
  });
});

describe('steps down dated by the segmentation', () => {
  it('ozone: the fall after the peak at 27-28 is dated within 5 points of 28 by the boundary of two lines (30), not at 35 (a level split pulled by the slopes)', () => {
    const downs = detectSteps(points('ozone'), opts).filter((c) => c.direction === 'improvement');
    expect(downs).toHaveLength(1);
    expect(Math.abs(downs[0]!.index - 28)).toBeLessThanOrEqual(5);
  });
});
