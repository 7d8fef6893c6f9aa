/**
 * The retrospective verdict on a window of per-minute points, from its
 * segmentation (segment.ts: a line per segment, one fixed penalty):
 *
 * - `segmentChanges`: every boundary of the window where the lines fitted
 *   either side are at least ×SHIFT_MIN_RATIO apart at the boundary (in
 *   either direction). A bend in growth (lines that meet) is not a change;
 *   a jump is, dated to its first point and sized by the two lines there,
 *   so a step inside a trend is measured against the trend, not against
 *   the level before. A jump of at least `minRatio` is a 'step', a smaller
 *   one a 'shift'. None of them pages: a step up is a regression only when
 *   the streaming test raised it too (`confirmStep`). It needs no warm-up:
 *   a short series (15 points) gets a verdict.
 * - `confirmStep`: does the segmentation hold a jump, in the streaming
 *   change's direction, within its onset interval (at least ±5 points)? If
 *   so it dates (the boundary) and sizes (the lines' ratio) the change; if
 *   not, the change is a stretch of smooth growth (or noise) that a level
 *   test mistook for a step.
 */
import { firstDifferenceSd, lineAt, segmentLines, type Segment } from './segment.ts';
import type { MinutePoint, StepChange, StepDirection, StepMetric } from './types.ts';

/** Smallest jump between the lines either side of a boundary that is reported (×1.05 = 5 %). */
export const SHIFT_MIN_RATIO = 1.05;
/** Half-width of the onset window a boundary confirms a streaming change in, at least. */
export const CONFIRM_MIN_POINTS = 5;
/** Boundaries of the two quantiles this close are one change. */
const SAME_CHANGE_POINTS = 5;

export interface SegmentChange {
  /** First point of the new segment: index into the points passed. */
  index: number;
  t: number;
  metric: StepMetric;
  direction: StepDirection;
  /** The line after over the line before, at `index` (the jump the trend does not explain). */
  ratio: number;
  /** 'step': at least minRatio (as the streaming test reports); 'shift': smaller. */
  kind: 'step' | 'shift';
  /** Growth factor per point of the segments before and after (1 = flat). */
  slopeBefore: number;
  slopeAfter: number;
}

export interface SegmentVerdictOptions {
  /** Added before taking logs (as the detection's `floor`). */
  floor?: number;
  /** Ratio from which a jump is a 'step' (the detection's `minRatio`). Default 1.2. */
  minRatio?: number;
}

/** log(q + floor) of a quantile per point, NaN where the point has no data. */
function logs(points: readonly MinutePoint[], key: StepMetric, floor: number): Float64Array {
  const ys = new Float64Array(points.length);
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    const v = p[key];
    ys[i] =
      p.count > 0 && Number.isFinite(v) && v + floor > 0 ? Math.log(Math.max(v, 0) + floor) : NaN;
  }
  return ys;
}

/** The segmentation of one quantile of `points`. */
export function segmentMetric(
  points: readonly MinutePoint[],
  key: StepMetric,
  floor = 0,
): Segment[] {
  const ys = logs(points, key, floor);
  return segmentLines(ys, firstDifferenceSd(ys));
}

/** The jumps at the boundaries of `segs` of at least SHIFT_MIN_RATIO. */
function jumps(
  points: readonly MinutePoint[],
  segs: readonly Segment[],
  key: StepMetric,
  minRatio: number,
): SegmentChange[] {
  const out: SegmentChange[] = [];
  for (let k = 1; k < segs.length; k++) {
    const a = segs[k - 1]!;
    const b = segs[k]!;
    if (a.points === 0 || b.points === 0) continue;
    const jump = lineAt(b, b.start) - lineAt(a, b.start);
    if (!(Math.abs(jump) >= Math.log(SHIFT_MIN_RATIO))) continue;
    const ratio = Math.exp(jump);
    out.push({
      index: b.start,
      t: points[b.start]!.t,
      metric: key,
      direction: jump > 0 ? 'regression' : 'improvement',
      ratio,
      kind: Math.abs(jump) >= Math.log(minRatio) ? 'step' : 'shift',
      slopeBefore: Math.exp(a.slope),
      slopeAfter: Math.exp(b.slope),
    });
  }
  return out;
}

/**
 * Every change of the window: the jumps of either quantile's segmentation,
 * one per place (the larger of the two quantiles' when they are within 5
 * points), oldest first.
 */
export function segmentChanges(
  points: readonly MinutePoint[],
  opts: SegmentVerdictOptions = {},
  /** The segmentations of `points` if the caller has them (segmentMetric with the same floor). */
  segs?: Record<StepMetric, Segment[]>,
): SegmentChange[] {
  const floor = opts.floor ?? 0;
  const minRatio = opts.minRatio ?? 1.2;
  const all: SegmentChange[] = [];
  for (const key of ['p50', 'p99'] as const)
    all.push(...jumps(points, segs?.[key] ?? segmentMetric(points, key, floor), key, minRatio));
  all.sort((x, y) => Math.abs(Math.log(y.ratio)) - Math.abs(Math.log(x.ratio)));
  const kept: SegmentChange[] = [];
  for (const c of all)
    if (!kept.some((k) => Math.abs(k.index - c.index) <= SAME_CHANGE_POINTS)) kept.push(c);
  return kept.sort((x, y) => x.index - y.index);
}

export type StepConfirmation =
  { confirmed: true; index: number; t: number; ratio: number } | { confirmed: false };

/**
 * Does the segmentation of `points` (a window holding the change; `index`
 * of the change is a position in it) hold a jump in the change's direction
 * near its onset? `points` and the change's index must be in the same
 * positions (pass the same array the change was detected on, or shift the
 * change's index to the window's).
 */
export function confirmStep(
  change: Pick<StepChange, 'index' | 'metric' | 'direction' | 'onsetUncertaintyPoints'>,
  points: readonly MinutePoint[],
  opts: SegmentVerdictOptions = {},
): StepConfirmation {
  const floor = opts.floor ?? 0;
  const reach = Math.max(CONFIRM_MIN_POINTS, change.onsetUncertaintyPoints);
  let best: SegmentChange | null = null;
  for (const key of [change.metric, change.metric === 'p50' ? 'p99' : 'p50'] as const) {
    for (const j of jumps(points, segmentMetric(points, key, floor), key, opts.minRatio ?? 1.2)) {
      if (j.direction !== change.direction || Math.abs(j.index - change.index) > reach) continue;
      if (!best || Math.abs(j.index - change.index) < Math.abs(best.index - change.index)) best = j;
    }
    if (best) break;
  }
  return best
    ? { confirmed: true, index: best.index, t: best.t, ratio: best.ratio }
    : { confirmed: false };
}
