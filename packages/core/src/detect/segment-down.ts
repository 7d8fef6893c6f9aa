/**
 * Steps down that the rank tests cannot confirm, confirmed by the
 * retrospective segmentation instead (segment.ts: a line per segment, one
 * fixed penalty). Only improvements: they never page, so a looser route to
 * them costs no one a night; a step up still needs the rank tests.
 *
 * Asked in two places, both rare (about the rate of alarms):
 * - when an improvement alarm is written off unconfirmed (confirm.ts): a
 *   step down in a noisy or seasonal series, which the `minRatio` margin of
 *   the rank tests eats (seatbelts ×0.78 and ×0.71, lga_passengers ×0.74 and
 *   ×0.61 in the TCPD development set);
 * - at each test of a pending improvement alarm of a young series (its
 *   first regime, onset within SHORT_HISTORY points), where no rank test can
 *   reach α yet (centralia: 15 points, a ×0.03 collapse at 12 with 3 after).
 *
 * The segmentation of the p50's window (the regime's points, up to
 * SEGMENT_DOWN_BEFORE before the alarm's onset, to now) must hold a boundary
 * within SEGMENT_DOWN_REACH points of the alarm's onset where the lines
 * either side are at least `minRatio` apart (a bend in growth is no jump),
 * both segments SEGMENT_DOWN_MIN_POINTS long (MIN_AFTER in a young series),
 * the new one the last (the level held until now), the medians of the
 * points next to it fallen by minRatio plus SEGMENT_DOWN_CLEAR_SD noise sds
 * (3 sds and MIN_BEFORE points before in a young series), and no gap in the
 * data longer than SEGMENT_DOWN_MAX_GAP_MS right before it. The boundary is
 * the onset reported. Noise: the larger of the window's first-difference sd
 * and the detector's count-aware noise sd for the current minute.
 * docs/detection.md "Steps down by the segmentation".
 */
import type { DetectorContext } from './context.ts';
import { noiseSd } from './model.ts';
import { firstDifferenceSd, lineAt, segmentLines } from './segment.ts';
import { MIN_AFTER, MIN_BEFORE, SHORT_CLEAR_SD, SHORT_HISTORY } from './tuning.ts';

function median(a: Float64Array): number {
  const s = Float64Array.from(a).sort();
  const h = s.length >> 1;
  return s.length % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
}

/** Points before the alarm's onset the segmentation sees, at most. */
export const SEGMENT_DOWN_BEFORE = 120;
/** Onset uncertainty reported for such a step, points. */
export const SEGMENT_DOWN_UNC = 3;
/** Points each segment either side must hold (a young series: MIN_AFTER): no wild minute is a segment. */
export const SEGMENT_DOWN_MIN_POINTS = 10;
/** The medians' fall must exceed minRatio by this many noise sds (the margin the rank tests use, beyond noise). */
export const SEGMENT_DOWN_CLEAR_SD = 1;
/** A boundary right after a gap in the data longer than this is not a step (30 minutes). */
export const SEGMENT_DOWN_MAX_GAP_MS = 30 * 60_000;
/** How far from the alarm's onset the boundary may be. */
export const SEGMENT_DOWN_REACH = 8;

/** The valid index of a segmentation-confirmed step down near `onset`, or -1. */
export function segmentedDrop(d: DetectorContext, mi: number, onset: number, now: number): number {
  // The p50 only: a p99 of a few events a minute flips between the body and a tail that shows
  // in some minutes, and a line per segment reads a change in that share as a level.
  if (mi !== 0) return -1;
  const s = d.metrics[mi]!;
  const ring = d.ring;
  const from = Math.max(s.regimeStart, onset - SEGMENT_DOWN_BEFORE, ring.valid - ring.cap, 0);
  if (now - onset + 1 < MIN_AFTER || onset - from < MIN_AFTER) return -1;
  const ys = Float64Array.from(ring.rangeY(mi, from, now, 1));
  const young = s.regimeStart === 0 && onset < SHORT_HISTORY;
  // A cheap screen first (most write-offs end here): the medians' test below at every
  // position in reach, with the detector's noise sd (the segmentation's is no smaller).
  const least = young ? MIN_AFTER : SEGMENT_DOWN_MIN_POINTS;
  const need = d.logMinRatio + SEGMENT_DOWN_CLEAR_SD * noiseSd(d, mi, now);
  let screened = false;
  for (let p = onset - SEGMENT_DOWN_REACH; p <= onset + SEGMENT_DOWN_REACH && !screened; p++) {
    const i = p - from;
    if (i < least || ys.length - i < least) continue;
    const fall =
      median(ys.subarray(i - SEGMENT_DOWN_MIN_POINTS < 0 ? 0 : i - SEGMENT_DOWN_MIN_POINTS, i)) -
      median(ys.subarray(i, Math.min(ys.length, i + SEGMENT_DOWN_MIN_POINTS)));
    if (fall >= need) screened = true;
  }
  if (!screened) return -1;
  const sd = Math.max(firstDifferenceSd(ys), noiseSd(d, mi, now));
  const segs = segmentLines(ys, sd);
  let best = -1;
  for (let k = 1; k < segs.length; k++) {
    const a = segs[k - 1]!;
    const b = segs[k]!;
    const at = from + b.start;
    if (Math.abs(at - onset) > SEGMENT_DOWN_REACH || b.end - b.start < least) continue;
    // The new level held until now (the last segment): a dip that came back is load wander.
    if (a.end - a.start < least || k !== segs.length - 1) continue;
    if (!(lineAt(b, b.start) - lineAt(a, b.start) <= -d.logMinRatio)) continue;
    // Not across an outage: after hours without data a daily cycle alone moves the level.
    if (ring.time[at % ring.cap]! - ring.time[(at - 1) % ring.cap]! > SEGMENT_DOWN_MAX_GAP_MS)
      continue;
    // A level that fell, not lines that part (a bend of a daily cycle): the medians of the
    // SEGMENT_DOWN_MIN_POINTS points either side of the boundary minRatio apart too.
    const before = ys.subarray(Math.max(a.start, b.start - SEGMENT_DOWN_MIN_POINTS), b.start);
    const later = ys.subarray(b.start, Math.min(b.end, b.start + SEGMENT_DOWN_MIN_POINTS));
    const fall = median(before) - median(later);
    if (!(fall >= d.logMinRatio + SEGMENT_DOWN_CLEAR_SD * sd)) continue;
    // A young series as its rank path (confirm.ts clearStep): MIN_BEFORE points before, and
    // levels SHORT_CLEAR_SD noise sds apart.
    if (young && (b.start < MIN_BEFORE || !(fall >= SHORT_CLEAR_SD * sd))) continue;
    if (best < 0 || Math.abs(at - onset) < Math.abs(best - onset)) best = at;
  }
  return best;
}

/** Points either side of the split that dating looks at (the cost is quadratic in the window). */
export const REDATE_SIDE = 40;
/** Smallest jump between the lines that dates a step down (as the verdict's shifts: ×1.05). */
export const REDATE_MIN_JUMP = Math.log(1.05);

/**
 * A step down confirmed by the rank tests at valid index `split` (± `unc`),
 * dated by the segmentation instead: the nearest boundary within max(5, unc)
 * points whose lines fell by at least ×1.05 (the split of a level test is
 * pulled by a trend either side; the boundary of two lines is not). `split`
 * when there is none.
 */
export function segmentedOnset(
  d: DetectorContext,
  mi: number,
  split: number,
  unc: number,
  now: number,
): number {
  const s = d.metrics[mi]!;
  const ring = d.ring;
  const from = Math.max(s.regimeStart, split - REDATE_SIDE, ring.valid - ring.cap, 0);
  const to = Math.min(now, split + REDATE_SIDE);
  if (to - split + 1 < MIN_AFTER || split - from < MIN_BEFORE) return split;
  const ys = Float64Array.from(ring.rangeY(mi, from, to, 1));
  const sd = Math.max(firstDifferenceSd(ys), noiseSd(d, mi, now));
  const segs = segmentLines(ys, sd);
  const reach = Math.max(5, unc);
  let best = split;
  let bestDist = Infinity;
  for (let k = 1; k < segs.length; k++) {
    const a = segs[k - 1]!;
    const b = segs[k]!;
    const at = from + b.start;
    if (Math.abs(at - split) > reach) continue;
    if (!(lineAt(b, b.start) - lineAt(a, b.start) <= -REDATE_MIN_JUMP)) continue;
    if (Math.abs(at - split) < bestDist) {
      best = at;
      bestDist = Math.abs(at - split);
    }
  }
  return best;
}
