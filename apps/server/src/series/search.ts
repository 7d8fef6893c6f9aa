/**
 * The Explorer's search: series whose service, op, name, peer or one of whose
 * hosts contain every word typed, with what a list row needs to be read at a
 * glance: the current p50/p99, a p99 sparkline over the window, the open
 * regression (for its onset) and the SLOs watching. One round of batched
 * queries for the page of results, so typing stays fast with thousands of series.
 */
import type { SeriesSummary } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { shownSeries } from '../otlp/registry.ts';
import { MATCH_SQL } from '../slos/store.ts';
import { sparkHistograms, sparkWindow, summarize } from './spark.ts';
import { SERIES_COLUMNS, withCallsFrom } from './columns.ts';

export interface SearchInput {
  q: string;
  fromMs: number;
  toMs: number;
  limit: number;
}

/** `%`, `_` and `\` typed by the user are literal characters, not patterns. */
function likePattern(word: string): string {
  return `%${word.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
}

interface LabelRow {
  id: string;
  service: string;
  op: string;
  view: string;
  name: string;
  peer: string | null;
  first_seen: Date;
  last_seen: Date;
  hosts: string[];
  calls_from: SeriesSummary['calls_from'];
  metrics_not_counted: boolean;
  total: string;
}

/** SQL for "every word appears in the service, op, name, peer or a host" (ILIKE), its arguments appended. */
export function wordsClause(words: string[], args: unknown[]): string[] {
  return words.map((w) => {
    args.push(likePattern(w));
    const p = `$${args.length}`;
    return `(s.service ILIKE ${p} OR s.op ILIKE ${p} OR s.name ILIKE ${p} OR s.peer ILIKE ${p}
      OR EXISTS (SELECT 1 FROM series_resources sr JOIN resources r ON r.id = sr.resource_id
                  WHERE sr.series_id = s.id AND r.host ILIKE ${p}))`;
  });
}

/** The words of a search text (at most 8). */
export const searchWords = (q: string) => q.trim().split(/\s+/).filter(Boolean).slice(0, 8);

async function matchingSeries(
  pool: Pool,
  words: string[],
  limit: number,
): Promise<{ rows: LabelRow[]; total: number }> {
  const args: unknown[] = [];
  const where = [shownSeries(), ...wordsClause(words, args)];
  // A name that starts with the first word ranks before one that merely contains it.
  args.push(words[0] ? `${words[0].replace(/[\\%_]/g, (c) => '\\' + c)}%` : '%');
  const prefix = `$${args.length}`;
  args.push(limit);
  const { rows } = await pool.query<
    Omit<LabelRow, 'calls_from' | 'metrics_not_counted'> & { edge_view: boolean }
  >(
    `SELECT s.id::text, s.service, s.op, s.view, s.name, NULLIF(s.peer, '') AS peer, s.first_seen, s.last_seen,
            ${SERIES_COLUMNS},
            count(*) OVER () AS total
       FROM series s WHERE ${where.join(' AND ')}
      ORDER BY (s.name ILIKE ${prefix}) DESC, s.last_seen DESC, s.service, s.op, s.view, s.name, s.peer
      LIMIT $${args.length}`,
    args,
  );
  return { rows: await withCallsFrom(pool, rows), total: rows[0] ? Number(rows[0].total) : 0 };
}

export async function searchSeries(
  pool: Pool,
  input: SearchInput,
): Promise<{ series: SeriesSummary[]; total: number }> {
  const words = searchWords(input.q);
  const { rows, total } = await matchingSeries(pool, words, input.limit);
  if (!rows.length) return { series: [], total };
  const ids = rows.map((r) => r.id);
  const w = sparkWindow(input.fromMs, input.toMs);
  const [hists, regressions, slos] = await Promise.all([
    sparkHistograms(pool, ids, w),
    pool.query<{
      series_id: string;
      id: string;
      onset: Date;
      status: string;
      metric: string;
      ratio: number;
    }>(
      // A regression is one incident: every series it was found on (its members) shows it, with that series' numbers.
      `SELECT DISTINCT ON (m.series_id) m.series_id::text, r.id::text, m.onset, r.status, m.metric,
              CASE WHEN m.metric = 'p99' THEN m.ratio_p99 ELSE m.ratio_p50 END AS ratio
         FROM regression_members m JOIN regressions r ON r.id = m.regression_id
        WHERE m.series_id = ANY($1::bigint[]) AND r.status <> 'resolved'
        ORDER BY m.series_id, m.onset DESC`,
      [ids],
    ),
    pool.query<{ id: string; slo_ids: string[] }>(
      `SELECT s.id::text, array_agg(o.id::text ORDER BY o.id) AS slo_ids
         FROM series s JOIN slos o ON ${MATCH_SQL} WHERE s.id = ANY($1::bigint[]) GROUP BY s.id`,
      [ids],
    ),
  ]);
  const regressionOf = new Map(regressions.rows.map((r) => [r.series_id, r]));
  const slosOf = new Map(slos.rows.map((r) => [r.id, r.slo_ids]));
  const series = rows.map((r): SeriesSummary => {
    const reg = regressionOf.get(r.id);
    return {
      id: r.id,
      service: r.service,
      op: r.op as SeriesSummary['op'],
      view: r.view as SeriesSummary['view'],
      name: r.name,
      peer: r.peer,
      hosts: r.hosts,
      calls_from: r.calls_from,
      metrics_not_counted: r.metrics_not_counted,
      first_seen: r.first_seen.toISOString(),
      last_seen: r.last_seen.toISOString(),
      ...summarize(hists.get(r.id), w),
      regression: reg
        ? {
            id: reg.id,
            onset: reg.onset.toISOString(),
            status: reg.status,
            metric: reg.metric,
            ratio: Number(reg.ratio.toPrecision(4)),
          }
        : null,
      slo_ids: slosOf.get(r.id) ?? [],
    };
  });
  return { series, total };
}
