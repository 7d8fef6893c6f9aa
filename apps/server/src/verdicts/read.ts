/**
 * What a verdict reads: the series a marker can affect (with the hosts feeding
 * each), their histograms per host and minute over the verdict's windows, and
 * how far edge pairing has got. Queries only; the rule is core's verdict/.
 */
import type { Queryable } from '../db/pool.ts';
import { markerTouchesSeries, type SparseHistogram } from '@onset/core';
import type { Op, View } from '@onset/contract';

export interface JudgedSeries {
  id: string;
  service: string;
  op: Op;
  view: View;
  name: string;
  peer: string | null;
  /** Hosts that feed it (for an edge view: the callee's). */
  hosts: string[];
}

/**
 * The series a marker can explain a change in, by attribution's rule (core
 * markerTouchesSeries; the SQL only narrows the candidates): its service's, the
 * edges to it (peer), and those its hosts feed. Host series (op `host`) are context,
 * never judged.
 */
export async function seriesTouchedBy(
  db: Queryable,
  m: { service: string | null; hosts: string[] },
): Promise<JudgedSeries[]> {
  const { rows } = await db.query<JudgedSeries>(
    `WITH touched AS (
       SELECT id FROM series WHERE $1::text IS NOT NULL AND (service = $1 OR peer = $1)
       UNION
       SELECT sr.series_id FROM series_resources sr JOIN resources r ON r.id = sr.resource_id
        WHERE cardinality($2::text[]) > 0 AND r.host = ANY($2::text[]))
     SELECT s.id::text, s.service, s.op, s.view, s.name, NULLIF(s.peer, '') AS peer,
            COALESCE(array_agg(DISTINCT r.host ORDER BY r.host) FILTER (WHERE r.host <> ''), '{}') AS hosts
       FROM series s JOIN touched t ON t.id = s.id
       LEFT JOIN series_resources sr ON sr.series_id = s.id
       LEFT JOIN resources r ON r.id = sr.resource_id
      WHERE s.op <> 'host'
      GROUP BY s.id
      ORDER BY s.id`,
    [m.service, m.hosts],
  );
  return rows.filter((s) => markerTouchesSeries(m, s));
}

export interface MinuteRow {
  series_id: string;
  host: string;
  minute_ms: number;
  hist: SparseHistogram;
}

/** Histograms of these series per host and minute, minutes in [fromMs, toMs). */
export async function minuteHistograms(
  db: Queryable,
  seriesIds: readonly string[],
  fromMs: number,
  toMs: number,
): Promise<MinuteRow[]> {
  if (!seriesIds.length || toMs <= fromMs) return [];
  const { rows } = await db.query<{
    series_id: string;
    host: string;
    minute_ms: string;
    idx: number[];
    cnt: number[];
  }>(
    `SELECT h.series_id::text, r.host, (extract(epoch FROM h.minute) * 1000)::bigint AS minute_ms, h.idx, h.cnt
       FROM histograms h JOIN resources r ON r.id = h.resource_id
      WHERE h.series_id = ANY($1::bigint[]) AND h.minute >= $2 AND h.minute < $3`,
    [seriesIds, new Date(fromMs), new Date(toMs)],
  );
  return rows.map((r) => ({
    series_id: r.series_id,
    host: r.host,
    minute_ms: Number(r.minute_ms),
    hist: { idx: r.idx, cnt: r.cnt },
  }));
}
