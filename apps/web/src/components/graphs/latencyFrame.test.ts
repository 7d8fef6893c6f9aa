import { describe, expect, it } from 'vitest';
import { alignLines, thinFrame, withGapBreaks } from './latencyFrame.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');

describe('aligning several lines', () => {
  it('aligns on the union of steps and breaks at holes', () => {
    const f = alignLines(
      [
        {
          key: 'a',
          label: 'a',
          color: 'client',
          points: [
            { tMs: T0, v: 1 },
            { tMs: T0 + 60_000, v: 2 },
          ],
        },
        {
          key: 'b',
          label: 'b',
          color: 'server',
          points: [
            { tMs: T0 + 60_000, v: 3 },
            { tMs: T0 + 300_000, v: 4 },
          ],
        },
      ],
      60_000,
    );
    expect(f.x).toEqual([T0, T0 + 60_000, T0 + 120_000, T0 + 300_000].map((t) => t / 1000));
    expect(f.lines[0]!.values).toEqual([1, 2, null, null]);
    expect(f.lines[1]!.values).toEqual([null, 3, null, 4]);
  });

  it('inserts exactly one break per hole', () => {
    expect(withGapBreaks([0, 60, 120, 600], 60)).toEqual([0, 60, 120, 180, 600]);
  });
});

describe('thinning long frames to pixel resolution', () => {
  const frame = (values: Array<number | null>) => ({
    x: values.map((_, i) => i * 60),
    lines: [{ key: 'a', label: 'a', color: 'p50' as const, values }],
    count: values.map(() => 5),
    stepMs: 60_000,
  });

  it('leaves short frames alone', () => {
    const f = frame([1, 2, 3]);
    const t = thinFrame(f, 10);
    expect(t.thinned).toBe(false);
    expect(t.lines[0]!.values).toBe(f.lines[0]!.values);
  });

  it('keeps every spike and dip, in time order, and the same x for all lines', () => {
    const values = Array.from({ length: 10_000 }, (_, i) =>
      i === 4321 ? 900 : i === 7000 ? 0.01 : 1,
    );
    const t = thinFrame(frame(values), 100);
    expect(t.thinned).toBe(true);
    expect(t.x.length).toBe(200);
    expect(t.lines[0]!.values.length).toBe(200);
    expect(Math.max(...(t.lines[0]!.values as number[]))).toBe(900);
    expect(Math.min(...(t.lines[0]!.values as number[]))).toBe(0.01);
    // The spike's bucket shows it where it was: within that bucket's time span.
    const at = t.lines[0]!.values.indexOf(900);
    expect(Math.abs(t.x[at]! - 4321 * 60)).toBeLessThanOrEqual(100 * 60);
    for (let i = 1; i < t.x.length; i++) expect(t.x[i]!).toBeGreaterThanOrEqual(t.x[i - 1]!);
  });

  it('keeps gaps longer than a bucket as gaps', () => {
    const values = Array.from({ length: 1000 }, (_, i) => (i >= 400 && i < 600 ? null : 2));
    const t = thinFrame(frame(values), 50);
    expect(t.lines[0]!.values.filter((v) => v === null).length).toBeGreaterThanOrEqual(18);
  });

  it('thins 43,200 points × 3 lines to 4,000 each', () => {
    const values = Array.from({ length: 43_200 }, (_, i) => 1 + (i % 97));
    const f = {
      ...frame(values),
      lines: [0, 1, 2].map((k) => ({
        key: String(k),
        label: String(k),
        color: 'p50' as const,
        values,
      })),
    };
    const t = thinFrame(f);
    expect(t.x.length).toBeLessThanOrEqual(4000);
    expect(t.lines.every((l) => l.values.length === t.x.length)).toBe(true);
    expect(t.count!.length).toBe(t.x.length);
  });
});
