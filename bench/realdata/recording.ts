/**
 * A recording: real per-minute series of this machine with no change
 * anyone made (docs/detection.md "Real recordings"), stored compactly as
 * gzipped JSON. Each series keeps its labels and its points as the
 * detection pass reads them (count, p50, p99 in µs per minute, from the
 * merged per-minute histograms: detection/points.ts readPoints).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { detectOptionsFor, detectSteps, type MinutePoint } from '@onset/core';

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
  regressions: Array<{ series: string; onset: string; metric: string; ratio: number }>;
  improvements: number;
}

/**
 * Every series of a recording through the detector in the server's
 * configuration for its view. Feeding a series at once gives exactly what a
 * pass feeding it minute by minute gives (property-tested in packages/core).
 */
export function replayRecording(rec: Recording): ReplayResult {
  const out: ReplayResult = {
    series: rec.series.length,
    minutes: 0,
    seriesDays: 0,
    regressions: [],
    improvements: 0,
  };
  for (const s of rec.series) {
    const points = minutePoints(s);
    out.minutes += points.length;
    out.seriesDays += (s.points.at(-1)![0] + 1) / 1440;
    for (const c of detectSteps(points, detectOptionsFor(s.view))) {
      if (c.direction === 'improvement') out.improvements++;
      else if ((c.shape ?? 'step') !== 'transient')
        out.regressions.push({
          series: `${s.service} ${s.op} ${s.view} ${s.name}`,
          onset: new Date(c.t).toISOString(),
          metric: c.metric,
          ratio: c.ratio,
        });
    }
  }
  return out;
}
