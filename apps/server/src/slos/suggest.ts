import type { Queryable } from '../db/pool.ts';
import { estimateGoodFromHistogram, suggestThreshold, type ThresholdSuggestion } from '@onset/core';
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

/** The earliest open (or acknowledged) regression of a series: its onset bounds the baseline. */
interface OpenRegression {
  id: string;
  onsetMs: number;
  uncertaintyMs: number;
  after: { p50_ms: number; p99_ms: number };
}

async function openRegressionOf(db: Queryable, seriesId: string): Promise<OpenRegression | null> {
  const { rows } = await db.query<{
    id: string;
    onset: Date;
    unc: number;
    after: { p50_ms: number; p99_ms: number };
  }>(
    // This series' own evidence of the regression (one of its members).
    `SELECT r.id::text, m.onset, m.onset_uncertainty_ms AS unc, m.after
       FROM regression_members m JOIN regressions r ON r.id = m.regression_id
      WHERE m.series_id = $1 AND r.status <> 'resolved' ORDER BY m.onset LIMIT 1`,
    [seriesId],
  );
  const r = rows[0];
  return r ? { id: r.id, onsetMs: r.onset.getTime(), uncertaintyMs: r.unc, after: r.after } : null;
}

/** Largest value of the 1-1.5-2-…-8 × 10^k sequence strictly below `x`. */
function niceBelow(x: number): number {
  const exp = Math.floor(Math.log10(x));
  let best = 0;
  for (let e = exp - 1; e <= exp; e++)
    for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8]) {
      const v = Number((m * Math.pow(10, e)).toPrecision(6));
      if (v < x) best = Math.max(best, v);
    }
  return best;
}

export interface BaselineSuggestion {
  suggestion: ThresholdSuggestion;
  fromMs: number;
  toMs: number;
  beforeRegression?: {
    regression_id: string;
    onset: string;
    after_ms: number;
    quantile: 'p50' | 'p99';
  };
}

/**
 * A threshold learnt from the series' normal behaviour: the `lookbackMs`
 * before now, or, while the series has an open regression, before its onset
 * (minus the onset's uncertainty). Learning from the regressed minutes gave
 * thresholds that swallow the regression (15 s for a 41 ms baseline), so an
 * SLO made during an incident would read 100 %. With a regression, the
 * threshold is also kept below its after-level at the quantile the objective
 * compares with, so the new SLO sees the regression it was made from.
 */
export async function suggestFromBaseline(
  db: Queryable,
  seriesId: string,
  objective: number,
  lookbackMs: number,
  now: number,
): Promise<BaselineSuggestion | null> {
  const open = await openRegressionOf(db, seriesId);
  const toMs = open ? Math.min(now, open.onsetMs - open.uncertaintyMs) : now;
  const fromMs = toMs - lookbackMs;
  const suggestion = await suggestForSeries(db, seriesId, objective, fromMs, toMs);
  if (!suggestion) return null;
  if (!open) return { suggestion, fromMs, toMs };
  const quantile = objective >= 0.95 ? 'p99' : 'p50';
  const afterMs = quantile === 'p99' ? open.after.p99_ms : open.after.p50_ms;
  let { threshold_ms } = suggestion;
  // Headroom over the baseline must not reach the level the regression moved to.
  if (afterMs > suggestion.quantile_ms && threshold_ms >= afterMs)
    threshold_ms = Math.max(niceBelow(afterMs), suggestion.quantile_ms);
  if (threshold_ms >= afterMs && afterMs > 0)
    threshold_ms = Number((afterMs * 0.99).toPrecision(6));
  const capped =
    threshold_ms === suggestion.threshold_ms
      ? suggestion
      : {
          ...suggestion,
          threshold_ms,
          expected_sli: await expectedSli(db, seriesId, fromMs, toMs, threshold_ms),
        };
  return {
    suggestion: capped,
    fromMs,
    toMs,
    beforeRegression: {
      regression_id: open.id,
      onset: new Date(open.onsetMs).toISOString(),
      after_ms: afterMs,
      quantile,
    },
  };
}

async function expectedSli(
  db: Queryable,
  seriesId: string,
  fromMs: number,
  toMs: number,
  thresholdMs: number,
): Promise<number> {
  const { rows } = await db.query<{ i: number; c: string }>(
    `SELECT b.i, sum(b.c)::int8 AS c FROM histograms h, unnest(h.idx, h.cnt) AS b(i, c)
      WHERE h.series_id = $1 AND h.minute >= $2 AND h.minute < $3 GROUP BY 1 ORDER BY 1`,
    [seriesId, new Date(fromMs), new Date(toMs)],
  );
  const h = { idx: rows.map((r) => r.i), cnt: rows.map((r) => Number(r.c)) };
  const total = h.cnt.reduce((a, b) => a + b, 0);
  return total
    ? Math.min(1, Number((estimateGoodFromHistogram(h, thresholdMs * 1000) / total).toPrecision(6)))
    : 0;
}
