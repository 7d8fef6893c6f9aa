import { describe, expect, it } from 'vitest';
import { parseTime } from '@onset/contract';
import { shiftTimeText, withOverlay } from './overlayData.ts';
import type { LatencyFrame } from './latencyFrame.ts';

const DAY = 86_400_000;
const frame = (x: number[], p50: Array<number | null>): LatencyFrame => ({
  x,
  stepMs: 60_000,
  count: x.map(() => 10),
  lines: [{ key: '0.5', label: 'p50', color: 'p50', values: p50 }],
});

describe('withOverlay', () => {
  it('draws the earlier window on the current steps, dashed, labelled', () => {
    const now = frame([1000, 1060, 1120], [5, 6, 7]);
    const before = frame([1000 - 86400, 1060 - 86400, 1120 - 86400], [2, 3, 4]);
    const out = withOverlay(now, before, DAY, 'a day earlier');
    expect(out.x).toEqual([1000, 1060, 1120]);
    expect(out.lines.map((l) => [l.key, l.label, l.dash ?? false, l.values])).toEqual([
      ['0.5', 'p50', false, [5, 6, 7]],
      [`0.5@${DAY}`, 'p50 a day earlier', true, [2, 3, 4]],
    ]);
    expect(out.count).toEqual([10, 10, 10]);
  });

  it('keeps steps only one side has, with nulls on the other', () => {
    const now = frame([1060], [6]);
    const before = frame([1000 - 86400], [2]);
    const out = withOverlay(now, before, DAY, 'x');
    expect(out.x).toEqual([1000, 1060]);
    expect(out.lines[0]!.values).toEqual([null, 6]);
    expect(out.lines[1]!.values).toEqual([2, null]);
    expect(out.count).toEqual([null, 10]);
  });
});

describe('shiftTimeText', () => {
  const now = Date.parse('2026-12-03T06:00:00Z');
  it('keeps relative times relative and moves absolute ones', () => {
    expect(shiftTimeText('now-6h', DAY, now, parseTime)).toBe('now-1800m');
    expect(shiftTimeText('now', 7 * DAY, now, parseTime)).toBe('now-10080m');
    expect(shiftTimeText('2026-12-03T05:00:00Z', DAY, now, parseTime)).toBe(
      String(Date.parse('2026-12-02T05:00:00Z')),
    );
  });
});
