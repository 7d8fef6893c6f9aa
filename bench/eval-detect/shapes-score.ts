/**
 * Scoring of the shapes corpus (shapes.ts): per shape, what the detector
 * reported and how it should have. Steps match within ±MARGIN points in the
 * right direction; a burst is "opened" when a regression (not marked
 * transient) is placed on it; a ramp should give one drift, not steps; time
 * to open is wall-clock minutes from the moment a large step began (inside
 * its minute) to the pass that opens it, under a pass schedule (see
 * apps/server/src/detection/detect-options.ts).
 */
import { burstVerdict, type StepChange, type MinutePoint } from '@onset/core';
import { stepHeld } from '@onset/server/internals';
import { MARGIN } from './score.ts';
import { SHAPES_T0, type ShapeKind, type ShapeSeries } from './shapes.ts';

export interface Schedule {
  label: string;
  /** From a minute's end until the pass that feeds it (ms). */
  sealMs: number;
}

export interface ShapeRow {
  label: string;
  series: number;
  /** What the row counts (e.g. "found", "opened"), how many, and the share of `series`. */
  what: string;
  hits: number;
  share: number | null;
  medianDelay: number | null;
  /** Detections that match nothing the series holds (per row). */
  spurious: number;
  note: string;
}

const median = (xs: number[]): number | null => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
};
const quantile = (xs: number[], q: number): number | null => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

/**
 * A step opened on a latency view, followed pass by pass (one point each) as
 * the server follows it: 'paged' once it has held, 'transient' when it is a
 * burst that is over first, 'open' when the series ends undecided.
 */
function serverVerdict(c: StepChange, points: MinutePoint[]): 'paged' | 'transient' | 'open' {
  for (let k = c.detectedIndex; k < points.length; k++) {
    const since = points.slice(c.index, k + 1);
    if (burstVerdict(c, since).over) return 'transient';
    if (stepHeld(c, since, 0)) return 'paged';
  }
  return 'open';
}

/** A detection the server would open as a regression (not a transient, not a drift). */
const isStep = (c: StepChange) => ['step', 'floor'].includes(c.shape ?? 'step');

export function scoreShapes(
  corpus: ShapeSeries[],
  found: Map<number, StepChange[]>,
  schedules: Schedule[],
): { rows: ShapeRow[]; openMinutes: Record<string, number[]> } {
  const rows: ShapeRow[] = [];
  const of = (k: ShapeKind) => corpus.filter((s) => s.kind === k);

  // Change-free series: false alarms per 1,000 points.
  {
    const ss = of('control');
    const points = ss.reduce((a, s) => a + s.points.length, 0);
    const fa = ss.reduce((a, s) => a + (found.get(s.id) ?? []).filter(isStep).length, 0);
    rows.push({
      label: 'controls (mixture noise, no change)',
      series: ss.length,
      what: 'false alarms',
      hits: fa,
      share: null,
      medianDelay: null,
      spurious: fa,
      note: `${((1000 * fa) / Math.max(1, points)).toFixed(3)} per 1,000 points`,
    });
  }

  // Bursts of 2-8 minutes: what the server does with each step opened on one
  // (detection/commit.ts): alerted once it has held (stepHeld), closed as
  // transient, unpaged, once it is over first (core's burstVerdict).
  {
    const ss = of('burst');
    let opened = 0;
    let paged = 0;
    let closedTransient = 0;
    let detectorTransient = 0;
    let spurious = 0;
    for (const s of ss) {
      const b = s.burst!;
      const dets = found.get(s.id) ?? [];
      const on = (c: StepChange) => c.index >= b.start - MARGIN && c.index <= b.end + MARGIN;
      const steps = dets.filter((c) => on(c) && isStep(c) && c.direction === 'regression');
      if (steps.length) opened++;
      const verdicts = steps.map((c) => serverVerdict(c, s.points));
      if (verdicts.includes('paged')) paged++;
      else if (verdicts.includes('transient')) closedTransient++;
      if (dets.some((c) => on(c) && c.shape === 'transient')) detectorTransient++;
      spurious += dets.filter((c) => !on(c) && isStep(c)).length;
    }
    rows.push({
      label: 'bursts of 2-8 min (×5-1000)',
      series: ss.length,
      what: 'paged',
      hits: paged,
      share: paged / ss.length,
      medianDelay: null,
      spurious,
      note: `${opened} opened, of which ${closedTransient} closed as transient without paging; ${detectorTransient} confirmed after the end (not opened)`,
    });
  }

  // Ramps: reported once, as one drift (its start within two 10-point blocks), no step.
  {
    const ss = of('ramp');
    let steps = 0;
    let many = 0;
    let once = 0;
    let drifted = 0;
    const rateErr: number[] = [];
    const startErr: number[] = [];
    for (const s of ss) {
      const r = s.ramp!;
      const dets = found.get(s.id) ?? [];
      const on = (c: StepChange) => c.index >= r.start - 20 && c.index <= r.end + 60;
      const n = dets.filter((c) => on(c) && isStep(c)).length;
      const d = dets.filter((c) => on(c) && c.shape === 'drift');
      steps += n;
      if (n + d.length >= 2) many++;
      if (d.length === 1 && n === 0) once++;
      if (d.length) {
        drifted++;
        const truePerHour = Math.log(r.total) / ((r.end - r.start) / 60);
        const got = d[0]!.driftPerHour;
        if (got !== undefined) rateErr.push(Math.abs(Math.log(got) - truePerHour) / truePerHour);
        startErr.push(Math.abs(d[0]!.index - r.start));
      }
    }
    rows.push({
      label: 'ramps ×1.5-4 over 2-7 h',
      series: ss.length,
      what: 'reported once as drift',
      hits: once,
      share: once / ss.length,
      medianDelay: null,
      spurious: steps,
      note: `${drifted} with a drift; ${steps} steps on ramps; ${many} ramps reported ≥2 times; rate error (median) ${
        rateErr.length ? (100 * median(rateErr)!).toFixed(0) + '%' : '–'
      }; start error (median) ${startErr.length ? median(startErr) : '–'} points`,
    });
  }

  // Steps.
  const stepRow = (kind: ShapeKind, label: string) => {
    const ss = of(kind);
    let hits = 0;
    let spurious = 0;
    const delays: number[] = [];
    for (const s of ss) {
      const c = s.change!;
      const dir =
        kind === 'moderate-down' || (c.ratio < 1 && kind !== 'tail-floor')
          ? 'improvement'
          : 'regression';
      const dets = (found.get(s.id) ?? []).filter(isStep);
      const m = dets.find((d) => Math.abs(d.index - c.index) <= MARGIN && d.direction === dir);
      if (m) {
        hits++;
        delays.push(m.detectedIndex - c.index + 1);
      }
      spurious += dets.filter((d) => d !== m).length;
    }
    rows.push({
      label,
      series: ss.length,
      what: 'found (±5 points)',
      hits,
      share: hits / ss.length,
      medianDelay: median(delays),
      spurious,
      note: '',
    });
  };
  stepRow('moderate-up', 'moderate steps ×1.2-1.5, calm');
  stepRow('moderate-down', 'moderate steps ×0.67-0.83, calm');
  stepRow('short', 'short series (16-40 points), ×2-5');
  stepRow('tail-p99', 'p99 steps (3-10% of calls ×3-10)');
  stepRow('tail-floor', 'delayed-ACK floor (p99 24-98 → 50-65 ms)');
  stepRow('large', 'large steps ×2-10 (mid-minute)');

  // Time to open the large steps, per schedule.
  const openMinutes: Record<string, number[]> = {};
  const ss = of('large');
  for (const sch of schedules) {
    const mins: number[] = [];
    for (const s of ss) {
      const c = s.change!;
      const dir = c.ratio < 1 ? 'improvement' : 'regression';
      const m = (found.get(s.id) ?? [])
        .filter(isStep)
        .find((d) => Math.abs(d.index - c.index) <= MARGIN && d.direction === dir);
      if (!m) continue;
      const openedAt = m.detectedT + 60_000 + sch.sealMs;
      mins.push((openedAt - (SHAPES_T0 + c.startMinute * 60_000)) / 60_000);
    }
    openMinutes[sch.label] = mins;
    const within5 = mins.filter((x) => x <= 5).length;
    rows.push({
      label: `time to open, large steps: ${sch.label}`,
      series: ss.length,
      what: 'opened ≤ 5 min',
      hits: within5,
      share: within5 / ss.length,
      medianDelay: null,
      spurious: 0,
      note: `minutes from the change: median ${fmt1(median(mins))}, p90 ${fmt1(quantile(mins, 0.9))}, max ${fmt1(quantile(mins, 1))}`,
    });
  }
  return { rows, openMinutes };
}

const fmt1 = (x: number | null) => (x === null ? '–' : x.toFixed(1));

export function printShapes(rows: ShapeRow[]): string {
  const header = [
    'shape row',
    'series',
    'counted',
    'n',
    'share',
    'delay (med, points)',
    'other detections',
    'notes',
  ];
  const lines = [
    header,
    ...rows.map((r) => [
      r.label,
      String(r.series),
      r.what,
      String(r.hits),
      r.share === null ? '–' : (100 * r.share).toFixed(1) + '%',
      r.medianDelay === null ? '–' : String(r.medianDelay),
      String(r.spurious),
      r.note,
    ]),
  ];
  const widths = header.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
  const render = (l: string[]) => '| ' + l.map((x, c) => x.padEnd(widths[c]!)).join(' | ') + ' |';
  const sep = '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|';
  return [render(lines[0]!), sep, ...lines.slice(1).map(render)].join('\n');
}
