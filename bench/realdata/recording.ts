/**
 * A recording: real per-minute series of this machine with no change
 * anyone made (docs/detection.md "Real recordings"), stored compactly as
 * gzipped JSON. Each series keeps its labels and its points as the
 * detection pass reads them (count, p50, p99 in µs per minute, from the
 * merged per-minute histograms: detection/points.ts readPoints).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  callerFeelsGap,
  GAP_FELT_BEFORE_MS,
  confirmStep,
  decideStep,
  detectOptionsFor,
  detectSteps,
  hostCpuRise,
  isLoadRateSeries,
  segmentChanges,
  type HostCpuMinute,
  type MinutePoint,
  type NearIncidentMember,
  type StepChange,
} from '@onset/core';

export interface RecordedSeries {
  service: string;
  op: string;
  view: string;
  /** The series name; a file system path is replaced by `path#<n>` (no machine's paths in the repo). */
  name: string;
  /** First minute (epoch minutes); points are [minutes after it, count, p50 µs, p99 µs]. */
  t0: number;
  points: Array<[number, number, number, number]>;
}

export interface Recording {
  /** What was recorded and how (free text), and the wall-clock span. */
  about: string;
  from: string;
  to: string;
  /** The regressions the recording server's own detection passes opened. */
  live: Array<{ series: string; onset: string; metric: string }>;
  series: RecordedSeries[];
}

export async function writeRecording(file: string, rec: Recording): Promise<void> {
  await writeFile(file, gzipSync(Buffer.from(JSON.stringify(rec)), { level: 9 }));
}

export async function readRecording(file: string): Promise<Recording> {
  return JSON.parse(gunzipSync(await readFile(file)).toString('utf8')) as Recording;
}

export function minutePoints(s: RecordedSeries): MinutePoint[] {
  return s.points.map(([dm, count, p50, p99]) => ({
    t: (s.t0 + dm) * 60_000,
    count,
    p50,
    p99,
  }));
}

export interface ReplayResult {
  series: number;
  minutes: number;
  /** Σ over series of the span from its first to its last minute, in days. */
  seriesDays: number;
  /** What the pass would open: direction regression, not a transient burst (detection/commit.ts). */
  regressions: Array<{
    series: string;
    onset: string;
    metric: string;
    ratio: number;
    /** Whether the retrospective segmentation of the series holds its jump (confirmStep). */
    confirmed: boolean;
  }>;
  improvements: number;
  /** Steps up on load-rate series that opened nothing (decideStep: 'load-rate'; never paged). */
  loadRate: number;
  /** Steps up on gap views whose caller's view did not move with them (decideStep: 'gap-unfelt'). */
  gapUnfelt: number;
  /** Steps up that joined a regression another series opened (one incident, paged once). */
  joined: number;
  /** Steps up held for host contention (the recorded host's stolen CPU rose at the onset). */
  held: number;
  /** The retrospective verdict's own changes (segmentChanges; never paged): rises of at least minRatio, the rest. */
  verdict: { rises: number; other: number };
}

/**
 * Every series of a recording through the detector in the server's
 * configuration for its view. Feeding a series at once gives exactly what a
 * pass feeding it minute by minute gives (property-tested in packages/core).
 * Its steps up (not transient bursts) are decided as the pass's commit does
 * (core's decideStep, in onset order, load-rate series last as commit.ts
 * orders them; no deploy markers): what opens is a false regression. The
 * hold for host contention reads the recording's own `host` `cpu-steal`
 * series (the agent's stolen CPU, ms per second wanted), as the pass reads
 * it for the step's hosts: a recording is of one host, so every such series
 * is the step's host (several are averaged per minute; a minute's level is
 * its p50, the median of the agent's windows in it).
 */
export function replayRecording(rec: Recording): ReplayResult {
  const out: ReplayResult = {
    series: rec.series.length,
    minutes: 0,
    seriesDays: 0,
    regressions: [],
    improvements: 0,
    loadRate: 0,
    gapUnfelt: 0,
    joined: 0,
    held: 0,
    verdict: { rises: 0, other: 0 },
  };
  const steal = recordedSteal(rec);
  const ups: Array<{ s: RecordedSeries; id: number; c: StepChange; points: MinutePoint[] }> = [];
  for (const [id, s] of rec.series.entries()) {
    const points = minutePoints(s);
    out.minutes += points.length;
    out.seriesDays += (s.points.at(-1)![0] + 1) / 1440;
    const opts = detectOptionsFor(s.view);
    for (const c of detectSteps(points, opts)) {
      if (c.direction === 'improvement') out.improvements++;
      else if ((c.shape ?? 'step') !== 'transient') ups.push({ s, id, c, points });
    }
    for (const c of segmentChanges(points, opts))
      if (c.kind === 'step' && c.direction === 'regression') out.verdict.rises++;
      else out.verdict.other++;
  }
  ups.sort(
    (a, b) =>
      Number(isLoadRateSeries(a.s)) - Number(isLoadRateSeries(b.s)) ||
      a.c.detectedT - b.c.detectedT,
  );
  const near: NearIncidentMember[] = [];
  const known: Array<{ series_id: number; onset: Date; unc: number }> = [];
  for (const { s, id, c, points } of ups) {
    const member: NearIncidentMember & { seriesId: string } = {
      regression_id: '',
      open: true,
      seriesId: String(id),
      service: s.service,
      op: s.op,
      view: s.view,
      name: s.name,
      peer: '',
      onsetMs: c.t,
      uncertaintyMs: c.onsetUncertaintyPoints * 60_000,
      ratio_p50: c.ratios.p50,
      ratio_p99: c.ratios.p99,
      rollout: null,
    };
    // The pass sees the step through the minute it was detected in.
    const hostContention = hostCpuRise(steal, c.t, c.detectedT + 60_000) !== null;
    const callerFelt = s.view === 'gap' ? gapFelt(rec, s, c) : undefined;
    const d = decideStep({ step: member, known, near, rollout: null, hostContention, callerFelt });
    if (d.kind === 'load-rate') out.loadRate++;
    if (d.kind === 'gap-unfelt') out.gapUnfelt++;
    if (d.kind === 'hold') out.held++;
    if (d.kind !== 'open' && d.kind !== 'join') continue;
    known.push({ series_id: id, onset: new Date(c.t), unc: member.uncertaintyMs });
    if (d.kind === 'join') {
      out.joined++;
      near.push({ ...member, regression_id: d.incident.regression_id });
      continue;
    }
    near.push({ ...member, regression_id: String(out.regressions.length) });
    out.regressions.push({
      series: `${s.service} ${s.op} ${s.view} ${s.name}`,
      onset: new Date(c.t).toISOString(),
      metric: c.metric,
      ratio: c.ratio,
      confirmed: confirmStep(c, points, detectOptionsFor(s.view)).confirmed,
    });
  }
  return out;
}

/**
 * As the pass asks it of a gap view's step (core's callerFeelsGap): the
 * recorded client view of the same service and operation (recordings carry
 * no peer), the hour before the onset against the minutes through the one
 * the step was detected in. No such series: felt (the gap's step decides).
 */
function gapFelt(rec: Recording, gap: RecordedSeries, c: StepChange): boolean {
  const client = rec.series.find(
    (x) =>
      x.service === gap.service && x.op === gap.op && x.view === 'client' && x.name === gap.name,
  );
  if (!client) return true;
  const key = c.metric === 'p50' ? 2 : 3;
  const t: number[] = [];
  const v: number[] = [];
  for (const p of client.points) {
    const ms = (client.t0 + p[0]) * 60_000;
    if (ms < c.t - GAP_FELT_BEFORE_MS || ms > c.detectedT || p[1] === 0) continue;
    t.push(ms);
    v.push(p[key] / 1000);
  }
  return callerFeelsGap(t, v, c.t);
}

/** The recorded host's stolen CPU per minute (mean over its `host` `cpu-steal` series). */
export function recordedSteal(rec: Recording): HostCpuMinute[] {
  const byMinute = new Map<number, number[]>();
  for (const s of rec.series)
    if (s.op === 'host' && s.name === 'cpu-steal')
      for (const p of minutePoints(s))
        if (p.count > 0) {
          const vs = byMinute.get(p.t) ?? [];
          vs.push(p.p50 / 1000);
          byMinute.set(p.t, vs);
        }
  return [...byMinute.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([minuteMs, vs]) => ({
      minuteMs,
      stealMsPerS: vs.reduce((x, y) => x + y, 0) / vs.length,
    }));
}
