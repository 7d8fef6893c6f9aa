/**
 * GET /api/v1/series/{id}/segments: the retrospective verdict on a window
 * of one series (core's segmentChanges and segmentMetric over its
 * per-minute points, read as the detection pass reads them). Never pages:
 * what it shows beside the regressions is the shifts under the detector's
 * smallest step and the steps of series too short or too recent for the
 * streaming test (docs/detection.md "Retrospective segmentation").
 */
import {
  detectOptionsFor,
  lineAt,
  segmentChanges,
  segmentMetric,
  type MinutePoint,
  type Segment,
} from '@onset/core';
import type { SegmentLine, SegmentsResponse } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { readPoints } from '../detection/points.ts';

const MIN = 60_000;
/** Longest window, minutes (one day). */
export const SEGMENTS_MAX_MINUTES = 1440;

export async function seriesSegments(
  pool: Pool,
  series: { id: string; view: string },
  fromMs: number,
  toMs: number,
): Promise<SegmentsResponse> {
  const from = Math.floor(fromMs / MIN) * MIN;
  const to = Math.ceil(toMs / MIN) * MIN;
  const client = await pool.connect();
  let read: MinutePoint[];
  try {
    read =
      (
        await readPoints(client, {
          seriesIds: [Number(series.id)],
          fromMs: from,
          toMs: to,
          table: 'minute',
        })
      ).get(Number(series.id)) ?? [];
  } finally {
    client.release();
  }
  // One position per minute (minutes without calls are gaps), so a slope is per minute.
  const first = read.length ? read[0]!.t : from;
  const minutes = read.length ? Math.round((read[read.length - 1]!.t - first) / MIN) + 1 : 0;
  const points: MinutePoint[] = Array.from({ length: minutes }, (_, i) => ({
    t: first + i * MIN,
    count: 0,
    p50: NaN,
    p99: NaN,
  }));
  for (const p of read) points[Math.round((p.t - first) / MIN)] = p;
  const opts = detectOptionsFor(series.view);
  const floor = opts.floor ?? 0;
  const ms = (logUs: number) => Math.max(0, Math.exp(logUs) - floor) / 1000;
  const iso = (i: number) => new Date(first + i * MIN).toISOString();
  const lines = (segs: Segment[]): SegmentLine[] =>
    segs
      .filter((s) => s.points > 0)
      .map((s) => ({
        from: iso(s.start),
        to: iso(s.end),
        start_ms: ms(lineAt(s, s.start)),
        end_ms: ms(lineAt(s, s.end - 1)),
      }));
  const segs = {
    p50: segmentMetric(points, 'p50', floor),
    p99: segmentMetric(points, 'p99', floor),
  };
  const changes = segmentChanges(points, opts, segs).map((c) => {
    const line = segs[c.metric];
    const k = line.findIndex((s) => s.start === c.index);
    return {
      onset: iso(c.index),
      metric: c.metric,
      direction: c.direction,
      kind: c.kind,
      ratio: c.ratio,
      before_ms: ms(lineAt(line[k - 1]!, c.index)),
      after_ms: ms(lineAt(line[k]!, c.index)),
    };
  });
  return {
    series_id: series.id,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    points: read.length,
    changes,
    segments: { p50: lines(segs.p50), p99: lines(segs.p99) },
  };
}
