import type { Queryable } from '../db/pool.ts';
import { MATCH_SQL } from './store.ts';

/**
 * The SLOs whose selector matches each series: the same MATCH_SQL (and so
 * PostgreSQL's regex for name_match) that decides what the SLO counts.
 */
export async function slosWatchingSeries(
  db: Queryable,
  seriesIds: readonly string[],
): Promise<Array<{ series_id: string; slo_ids: string[] }>> {
  const { rows } = await db.query<{ series_id: string; slo_ids: string[] }>(
    `SELECT s.id::text AS series_id,
            COALESCE(array_agg(o.id::text ORDER BY o.id) FILTER (WHERE o.id IS NOT NULL), '{}') AS slo_ids
       FROM series s LEFT JOIN slos o ON ${MATCH_SQL}
      WHERE s.id = ANY($1::bigint[])
      GROUP BY s.id ORDER BY s.id`,
    [seriesIds],
  );
  return rows;
}
