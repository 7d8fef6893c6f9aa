/**
 * The retrospective segmentation and its verdict (docs/detection.md
 * "Retrospective segmentation"; segment.ts, segment-verdict.ts), on real
 * series of the Turing Change Point Dataset that motivated each rule
 * (fixtures/tcpd-segments.json: values and the annotators' change points).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  confirmStep,
  detectSteps,
  segmentChanges,
  segmentMetric,
  type MinutePoint,
} from '../src/index.ts';

const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/tcpd-segments.json', import.meta.url), 'utf8'),
) as {
  series: Record<string, { values: Array<number | null>; annotations: Record<string, number[]> }>;
};
const T0 = Date.UTC(2026, 0, 1);
/** One observation is one minute of one event (as eval:realdata feeds them). */
function points(name: string): MinutePoint[] {
  return fixture.series[name]!.values.map((v, i) =>
    v === null || !(v > 0)
      ? { t: T0 + i * 60_000, count: 0, p50: NaN, p99: NaN }
      : { t: T0 + i * 60_000, count: 1, p50: v, p99: v },
  );
}
const annotated = (name: string) => [
  ...new Set(Object.values(fixture.series[name]!.annotations).flat()),
];
const near = (i: number, xs: number[], w = 5) => xs.some((x) => Math.abs(x - i) <= w);
const opts = { minRatio: 1.2 };

describe('retrospective segmentation', () => {
  it('smooth growth is one trend, not a staircase (global_co2: ×1.4 over 104 points, no change marked in 3 of 5)', () => {
    const pts = points('global_co2');
    expect(pts.at(-1)!.p50 / pts[0]!.p50).toBeGreaterThan(1.3);
    expect(segmentChanges(pts, opts)).toEqual([]);
    // A level per segment would need many; the line per segment needs few, and none of them jumps.
    expect(segmentMetric(pts, 'p50').length).toBeLessThanOrEqual(5);
  });

  it('bends of a smooth curve are not changes; its two jumps are (children_per_woman, marked at 146 and 164-170)', () => {
    const pts = points('children_per_woman');
    // The line segmentation cuts the curve into many pieces (its slope keeps changing)…
    expect(segmentMetric(pts, 'p50').length).toBeGreaterThan(10);
    // …but only where the lines either side jump by ×1.05 or more is there a change.
    const cs = segmentChanges(pts, opts);
    expect(cs.length).toBeGreaterThanOrEqual(1);
    expect(cs.length).toBeLessThanOrEqual(3);
    for (const c of cs) expect(near(c.index, annotated('children_per_woman'))).toBe(true);
    expect(
      near(
        146,
        cs.map((c) => c.index),
      ),
    ).toBe(true);
  });

  it('a short series gets a verdict (centralia: 15 points, a ×0.03 collapse at 12 that no rank test can confirm)', () => {
    const pts = points('centralia');
    expect(pts).toHaveLength(15);
    // The streaming detector now reports it too, through the segmentation (segment-down.ts; its
    // test: detect-segment-down.test.ts), as an improvement within a point of 12.
    const streamed = detectSteps(pts, opts);
    expect(streamed).toHaveLength(1);
    expect(streamed[0]!.direction).toBe('improvement');
    expect(Math.abs(streamed[0]!.index - 12)).toBeLessThanOrEqual(1);
    const cs = segmentChanges(pts, opts);
    expect(cs).toHaveLength(1);
    expect(cs[0]).toMatchObject({ index: 12, direction: 'improvement', kind: 'step' });
    expect(cs[0]!.ratio).toBeLessThan(0.1);
  });
});

describe('a clean series read from log histograms', () => {
  // Per-minute p50 of 20 calls at 10 ms (sd 3 %), as the server reads it: most minutes land in one
  // bucket (×1.0202 wide), so most first differences are 0 and their MAD is 0; a minute now and
  // then in the bucket either side. The route's p50 moves ×1.15 (7 buckets) at minute 80.
  const BUCKET = 1.0202;
  const pts: MinutePoint[] = Array.from({ length: 120 }, (_, i) => {
    const wobble = i % 7 === 3 ? -1 : i % 11 === 5 ? 1 : 0;
    const p50 = 9999.17 * BUCKET ** ((i >= 80 ? 7 : 0) + wobble);
    return { t: T0 + i * 60_000, count: 20, p50, p99: p50 * BUCKET ** 3 };
  });

  it('finds a ×1.15 shift dated at its minute (the noise is not read from the shift itself)', () => {
    const p50 = segmentChanges(pts, opts).filter((c) => c.metric === 'p50');
    expect(p50).toHaveLength(1);
    expect(p50[0]!.index).toBe(80);
    expect(p50[0]!.kind).toBe('shift');
    expect(p50[0]!.ratio).toBeGreaterThan(1.12);
    expect(p50[0]!.ratio).toBeLessThan(1.18);
  });

  it('finds nothing in the same series without the shift', () => {
    const flat = pts.map((p, i) => (i >= 80 ? { ...pts[i - 77]!, t: p.t } : p));
    expect(segmentChanges(flat, opts)).toEqual([]);
  });
});

describe('confirmStep', () => {
  it('rejects the streaming steps inside growth and dates the real one (co2_canada)', () => {
    const pts = points('co2_canada');
    const changes = detectSteps(pts, opts);
    const verdicts = new Map(changes.map((c) => [c.index, confirmStep(c, pts, opts)]));
    // The detector's false change points that one straight line through both sides fits better.
    for (const i of [21, 59, 99]) {
      expect(verdicts.has(i), `streaming change at ${i}`).toBe(true);
      expect(verdicts.get(i)!.confirmed, `change at ${i}`).toBe(false);
    }
    // The annotated rise at 80 (5 of 5 annotators) is confirmed, at the annotated point.
    const v80 = verdicts.get(80)!;
    expect(v80.confirmed).toBe(true);
    if (v80.confirmed) {
      expect(v80.index).toBe(80);
      expect(v80.ratio).toBeGreaterThan(1.2);
    }
    expect(annotated('co2_canada')).toContain(80);
  });
});
