/**
 * An SLO's history for its charts (GET /api/v1/slos/{id}/history): burn rate
 * over each alert tier's long window and error budget left, per step, from
 * the latency histograms of every series the SLO's selector matches
 * (PostgreSQL's regex, the same MATCH_SQL that counts its events), with the
 * tiers exactly as the SLO pass evaluates them. The maths is core's.
 */
import type { Queryable } from '../db/pool.ts';
import {
  BURN_WINDOWS,
  budgetExhaustionMs,
  budgetHistory,
  burnRate,
  budgetRemaining,
  calendarPeriod,
  countsFromHistogram,
  denseCounts,
  historyStepMs,
  rollingBurn,
  sloWindowSpan,
  type StepCounts,
} from '@onset/core';
import type { SloBurnLine, SloHistory } from '@onset/contract';
import type { SloRow } from './store.ts';
import { MATCH_SQL, windowOf } from './store.ts';
import { evaluateSlos } from './evaluate.ts';

const HOUR_MS = 3_600_000;
/** The longest burn window drawn (ticket_3d): every burn line is complete from the range's start. */
const BURN_LOOKBACK_MS = 3 * 24 * HOUR_MS;

/** The SLO's series, matched by PostgreSQL (the same rule its counters use). */
async function sloSeriesIds(db: Queryable, sloId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT s.id::text AS id FROM slos o JOIN series s ON ${MATCH_SQL} WHERE o.id = $1 ORDER BY s.id`,
    [sloId],
  );
  return rows.map((r) => r.id);
}

/**
 * Merged histogram of every step of [fromMs, toMs) over the SLO's series,
 * as good/total counts (core estimates good at the threshold's bucket).
 * Whole-hour steps read the hourly rollups plus minutes not yet compacted.
 */
async function stepCounts(
  db: Queryable,
  slo: SloRow,
  fromMs: number,
  toMs: number,
  stepMs: number,
): Promise<StepCounts[]> {
  const hourly = stepMs % HOUR_MS === 0;
  const minutes = `SELECT h.minute AS at, h.idx, h.cnt FROM histograms h JOIN src ON src.id = h.series_id
                    WHERE h.minute >= $2 AND h.minute < $3 ${hourly ? 'AND NOT h.compacted' : ''}`;
  const rows = hourly
    ? `SELECT hh.hour AS at, hh.idx, hh.cnt FROM histograms_hourly hh JOIN src ON src.id = hh.series_id
        WHERE hh.hour >= $2 AND hh.hour < $3 UNION ALL ${minutes}`
    : minutes;
  const { rows: buckets } = await db.query<{ t: number; idx: number[]; cnt: number[] }>(
    `WITH src AS (SELECT s.id FROM slos o JOIN series s ON ${MATCH_SQL} WHERE o.id = $1),
          r AS (${rows}),
          b AS (SELECT floor(extract(epoch FROM r.at) * 1000 / $4::float8) * $4::float8 AS t, x.i, sum(x.c)::float8 AS c
                  FROM r, unnest(r.idx, r.cnt) AS x(i, c) GROUP BY 1, 2)
     SELECT t, array_agg(i ORDER BY i) AS idx, array_agg(c ORDER BY i) AS cnt FROM b GROUP BY t ORDER BY t`,
    [slo.id, new Date(fromMs), new Date(toMs), stepMs],
  );
  return buckets.map((b) => ({
    tMs: Number(b.t),
    ...countsFromHistogram({ idx: b.idx, cnt: b.cnt }, slo.threshold_us),
  }));
}

/** Steps whose window ends inside the view, as chart x values (end of each step, ms). */
function inView(counts: StepCounts[], stepMs: number, viewFromMs: number): number {
  const i = counts.findIndex((c) => c.tMs + stepMs > viewFromMs);
  return i < 0 ? counts.length : i;
}

export async function sloHistory(
  db: Queryable,
  slo: SloRow,
  view: { fromMs: number; toMs: number },
  now = Date.now(),
): Promise<SloHistory> {
  const [evaluation] = await evaluateSlos(db, [slo], now);
  const e = evaluation!;
  const win = windowOf(slo);
  // The length the tiers' factors were scaled to (the pass uses the same span).
  const lengthMs = sloWindowSpan(win, now).lengthMs;
  const rangeMs = view.toMs - view.fromMs;

  const burnStep = historyStepMs(rangeMs, BURN_LOOKBACK_MS);
  const burnFrom = Math.floor((view.fromMs - BURN_LOOKBACK_MS) / burnStep) * burnStep;
  const windowStart =
    win.kind === 'rolling'
      ? (end: number) => end - win.ms
      : (end: number) => calendarPeriod(end - 1, win.unit, win.timeZone).start;
  const budgetStep = Math.max(HOUR_MS, historyStepMs(rangeMs, lengthMs));
  const budgetFrom =
    Math.floor((windowStart(view.fromMs + budgetStep) - budgetStep) / budgetStep) * budgetStep;

  const [seriesIds, burnRaw, budgetRaw] = await Promise.all([
    sloSeriesIds(db, slo.id),
    stepCounts(db, slo, burnFrom, view.toMs, burnStep),
    stepCounts(db, slo, budgetFrom, view.toMs, budgetStep),
  ]);

  const burnCounts = denseCounts(burnRaw, burnStep, burnFrom, view.toMs);
  const bFirst = inView(burnCounts, burnStep, view.fromMs);
  const lines: SloBurnLine[] = e.tiers.map((t) => ({
    tier: t.name,
    window: t.long,
    factor: t.factor,
    severity: t.severity,
    enabled: t.enabled,
    values: rollingBurn(burnCounts, burnStep, BURN_WINDOWS[t.long], slo.objective).slice(bFirst),
  }));

  const budgetCounts = denseCounts(budgetRaw, budgetStep, budgetFrom, view.toMs);
  const gFirst = inView(budgetCounts, budgetStep, view.fromMs);
  const budgetValues = budgetHistory(budgetCounts, budgetStep, slo.objective, windowStart).slice(
    gFirst,
  );

  const budgetLeft = budgetRemaining(e.budget.good, e.budget.total, slo.objective);
  const burn1h = burnRate(e.windows['1h'].good, e.windows['1h'].total, slo.objective);
  return {
    slo_id: slo.id,
    from: new Date(view.fromMs).toISOString(),
    to: new Date(view.toMs).toISOString(),
    objective: slo.objective,
    threshold_ms: slo.threshold_us / 1000,
    window: slo.window_text,
    window_ms: lengthMs,
    series_ids: seriesIds,
    tiers: e.tiers,
    budget_remaining: budgetLeft,
    exhaustion_ms: budgetExhaustionMs(budgetLeft, burn1h, lengthMs),
    burn: {
      step_ms: burnStep,
      t: burnCounts.slice(bFirst).map((c) => c.tMs + burnStep),
      lines,
    },
    budget: {
      step_ms: budgetStep,
      t: budgetCounts.slice(gFirst).map((c) => c.tMs + budgetStep),
      values: budgetValues,
    },
  };
}
