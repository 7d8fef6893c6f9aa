/**
 * Scoring of detected change points against the synthetic truth.
 *
 * - A detection matches a true change when its onset index is within
 *   ±MARGIN (5) points; one detection per change (nearest first). Unmatched
 *   detections are false positives for precision/F1.
 * - A detection is *associated* with a true change when within ±ASSOC (60)
 *   points; location error is measured over associated detections ("±5" =
 *   share of them within 5 points). Detections associated with no change are
 *   false alarms, reported per 1,000 change-free points (points farther than
 *   ASSOC from every true change).
 * - Delay = points seen from the true change up to the confirmation,
 *   inclusive (detectedIndex - index + 1), for matched detections.
 */
import type { RateBucket, SynthSeries, TruthChange } from './synth.ts';

export const MARGIN = 5;
export const ASSOC = 60;

export interface Detection {
  index: number;
  /** Point at which the method reported it (null: unknown). */
  detectedIndex: number | null;
}

export interface MethodRun {
  name: string;
  available: boolean;
  note?: string;
  /** Per series id. */
  detections: Map<number, Detection[]>;
  /** Delay per `${seriesId}:${truthIndex}` when measured separately (batch methods). */
  delays?: Map<string, number | null>;
}

export interface ChangeOutcome {
  series: SynthSeries;
  truth: TruthChange;
  matched: boolean;
  delay: number | null;
  /** Unmatched detections within ±ASSOC points whose nearest change this is (placed 6-60 points off). */
  nearMisses: number;
}

export interface SeriesOutcome {
  series: SynthSeries;
  detections: number;
  tp: number;
  falseAlarms: number;
  changeFreePoints: number;
  /** |location error| of each associated detection. */
  locErrors: number[];
  changes: ChangeOutcome[];
}

export function scoreSeries(
  series: SynthSeries,
  dets: Detection[],
  delays?: Map<string, number | null>,
): SeriesOutcome {
  const truth = series.truth;
  const sorted = [...dets].sort((a, b) => a.index - b.index);
  const used = new Set<number>();
  const changes: ChangeOutcome[] = truth.map((t) => {
    let best = -1;
    for (let j = 0; j < sorted.length; j++) {
      if (used.has(j)) continue;
      const err = Math.abs(sorted[j]!.index - t.index);
      if (err <= MARGIN && (best < 0 || err < Math.abs(sorted[best]!.index - t.index))) best = j;
    }
    if (best < 0) return { series, truth: t, matched: false, delay: null, nearMisses: 0 };
    used.add(best);
    const d = sorted[best]!;
    const delay = delays
      ? (delays.get(`${series.id}:${t.index}`) ?? null)
      : d.detectedIndex === null
        ? null
        : d.detectedIndex - t.index + 1;
    return { series, truth: t, matched: true, delay, nearMisses: 0 };
  });
  let falseAlarms = 0;
  const locErrors: number[] = [];
  sorted.forEach((d, j) => {
    let nearest = Infinity;
    let which = -1;
    truth.forEach((t, i) => {
      const err = Math.abs(d.index - t.index);
      if (err < nearest) {
        nearest = err;
        which = i;
      }
    });
    if (nearest <= ASSOC) {
      locErrors.push(nearest);
      if (!used.has(j)) changes[which]!.nearMisses++;
    } else falseAlarms++;
  });
  let changeFreePoints = 0;
  for (let i = 0; i < series.points.length; i++)
    if (truth.every((t) => Math.abs(i - t.index) > ASSOC)) changeFreePoints++;
  return {
    series,
    detections: sorted.length,
    tp: changes.filter((c) => c.matched).length,
    falseAlarms,
    changeFreePoints,
    locErrors,
    changes,
  };
}

export interface Row {
  label: string;
  /**
   * Series-level rows have precision, F1 and false-alarm rates; change-level
   * rows have recall and delay, and a precision (and F1) near changes of
   * their kind: matches over matches plus the detections placed 6-60 points
   * off a change of the row (false alarms far from every change belong to no
   * change and are counted in the series rows).
   */
  level: 'series' | 'change';
  changes: number;
  detections: number | null;
  tp: number;
  precision: number | null;
  recall: number;
  f1: number | null;
  medianDelay: number | null;
  medianLocError: number | null;
  within5: number | null;
  falseAlarmsPer1k: number | null;
  falseAlarms: number | null;
  changeFreePoints: number | null;
}

export interface RowSpec {
  label: string;
  series?: (s: SynthSeries) => boolean;
  change?: (c: TruthChange, s: SynthSeries) => boolean;
}

const rate20 = (s: SynthSeries) => s.rate >= 20;
const inBucket = (r: RateBucket) => (s: SynthSeries) => s.rateBucket === r;

export const ROWS: RowSpec[] = [
  { label: 'all series', series: () => true },
  { label: 'no-change controls', series: (s) => s.truth.length === 0 },
  { label: 'latency view', series: (s) => s.view === 'latency' },
  { label: 'gap view (1 ms floor)', series: (s) => s.view === 'gap' },
  { label: '1-5 events/min', series: inBucket('1-5') },
  { label: '5-20 events/min', series: inBucket('5-20') },
  { label: '20-100 events/min', series: inBucket('20-100') },
  { label: '100-1000 events/min', series: inBucket('100-1000') },
  { label: 'diurnal cycle', series: (s) => s.diurnal },
  { label: 'with outage gaps', series: (s) => s.gaps },
  { label: 'steps 1.2-1.5x', change: (c) => c.ratio < 1.5 },
  { label: 'steps 1.5-2x', change: (c) => c.ratio >= 1.5 && c.ratio < 2 },
  { label: 'steps 2-5x', change: (c) => c.ratio >= 2 && c.ratio < 5 },
  { label: 'steps 5-50x', change: (c) => c.ratio >= 5 && c.ratio < 50 },
  { label: 'steps 50-1000x', change: (c) => c.ratio >= 50 },
  { label: 'p50 steps', change: (c) => c.kind === 'p50' },
  { label: 'p99 (tail) steps', change: (c) => c.kind === 'p99' },
  { label: 'flat +N shifts', change: (c) => c.kind === 'flat' },
  { label: 'gap +N shifts', change: (c) => c.kind === 'gap' },
  { label: 'improvements', change: (c) => c.direction === 'improvement' },
  { label: '>=1.5x, >=20 ev/min', change: (c, s) => c.ratio >= 1.5 && rate20(s) },
  { label: 'large >=2x', change: (c) => c.ratio >= 2 },
  { label: 'large >=2x, >=20 ev/min', change: (c, s) => c.ratio >= 2 && rate20(s) },
];

export function aggregate(outcomes: SeriesOutcome[], spec: RowSpec): Row {
  const median = (xs: number[]): number | null => {
    if (!xs.length) return null;
    const s = [...xs].sort((a, b) => a - b);
    const h = s.length >> 1;
    return s.length % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
  };
  if (spec.series) {
    const os = outcomes.filter((o) => spec.series!(o.series));
    const changes = os.flatMap((o) => o.changes);
    const detections = os.reduce((a, o) => a + o.detections, 0);
    const tp = os.reduce((a, o) => a + o.tp, 0);
    const fa = os.reduce((a, o) => a + o.falseAlarms, 0);
    const cfp = os.reduce((a, o) => a + o.changeFreePoints, 0);
    const loc = os.flatMap((o) => o.locErrors);
    const precision = detections ? tp / detections : changes.length ? 0 : 1;
    const recall = changes.length ? tp / changes.length : NaN;
    return {
      label: spec.label,
      level: 'series',
      changes: changes.length,
      detections,
      tp,
      precision,
      recall,
      f1: changes.length
        ? precision + recall > 0
          ? (2 * precision * recall) / (precision + recall)
          : 0
        : null,
      medianDelay: median(
        changes.filter((c) => c.matched && c.delay !== null).map((c) => c.delay!),
      ),
      medianLocError: median(loc),
      within5: loc.length ? loc.filter((e) => e <= MARGIN).length / loc.length : null,
      falseAlarmsPer1k: cfp ? (1000 * fa) / cfp : null,
      falseAlarms: fa,
      changeFreePoints: cfp,
    };
  }
  const changes = outcomes.flatMap((o) => o.changes.filter((c) => spec.change!(c.truth, o.series)));
  const tp = changes.filter((c) => c.matched).length;
  const near = changes.reduce((a, c) => a + c.nearMisses, 0);
  const recall = changes.length ? tp / changes.length : NaN;
  const precision = tp + near ? tp / (tp + near) : null;
  return {
    label: spec.label,
    level: 'change',
    changes: changes.length,
    detections: tp + near,
    tp,
    precision,
    recall,
    f1:
      precision === null || !changes.length
        ? null
        : precision + recall > 0
          ? (2 * precision * recall) / (precision + recall)
          : 0,
    medianDelay: median(changes.filter((c) => c.matched && c.delay !== null).map((c) => c.delay!)),
    medianLocError: null,
    within5: null,
    falseAlarmsPer1k: null,
    falseAlarms: null,
    changeFreePoints: null,
  };
}

export function scoreMethod(
  corpus: SynthSeries[],
  run: MethodRun,
): { outcomes: SeriesOutcome[]; rows: Row[] } {
  const outcomes = corpus.map((s) => scoreSeries(s, run.detections.get(s.id) ?? [], run.delays));
  return { outcomes, rows: ROWS.map((spec) => aggregate(outcomes, spec)) };
}
