import { suggestThreshold, type ThresholdSuggestion } from '@onset/core';
import type { Queryable } from './store.ts';
import { MATCH_SQL } from './store.ts';

export interface SeriesLabels {
  id: string;
  service: string;
  op: string;
  view: string;
  name: string;
  peer: string | null;
}

export async function seriesLabels(db: Queryable, id: string): Promise<SeriesLabels | null> {
  if (!/^\d{1,18}$/.test(id)) return null;
  const { rows } = await db.query<SeriesLabels>(
    `SELECT id::text, service, op, view, name, NULLIF(peer, '') AS peer FROM series WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/** A threshold for `objective` from the series' per-minute histograms over [from, to). */
export async function suggestForSeries(
  db: Queryable,
  seriesId: string,
  objective: number,
  fromMs: number,
  toMs: number,
): Promise<ThresholdSuggestion | null> {
  const { rows } = await db.query<{ i: number; c: number }>(
    `SELECT b.i, sum(b.c)::int8 AS c FROM histograms h, unnest(h.idx, h.cnt) AS b(i, c)
      WHERE h.series_id = $1 AND h.minute >= $2 AND h.minute < $3 GROUP BY 1 ORDER BY 1`,
    [seriesId, new Date(fromMs), new Date(toMs)],
  );
  return suggestThreshold(
    { idx: rows.map((r) => r.i), cnt: rows.map((r) => Number(r.c)) },
    objective,
  );
}

/** SLOs whose selector covers a series. */
export async function slosWatching(
  db: Queryable,
  seriesId: string,
): Promise<Array<{ id: string; name: string }>> {
  const { rows } = await db.query<{ id: string; name: string }>(
    `SELECT o.id::text, o.name FROM series s JOIN slos o ON ${MATCH_SQL} WHERE s.id = $1 ORDER BY o.id`,
    [seriesId],
  );
  return rows;
}

/** Series no SLO watches: the candidates for one-click default SLOs. */
export async function unwatchedSeries(
  db: Queryable,
  f: { service?: string; op?: string; limit: number },
): Promise<SeriesLabels[]> {
  const args: unknown[] = [];
  const where = ['NOT EXISTS (SELECT 1 FROM slos o WHERE ' + MATCH_SQL + ')'];
  if (f.service) {
    args.push(f.service);
    where.push(`s.service = $${args.length}`);
  }
  if (f.op) {
    args.push(f.op);
    where.push(`s.op = $${args.length}`);
  }
  args.push(f.limit);
  const { rows } = await db.query<SeriesLabels>(
    `SELECT s.id::text, s.service, s.op, s.view, s.name, NULLIF(s.peer, '') AS peer FROM series s
      WHERE ${where.join(' AND ')} ORDER BY s.service, s.op, s.view, s.name LIMIT $${args.length}`,
    args,
  );
  return rows;
}
