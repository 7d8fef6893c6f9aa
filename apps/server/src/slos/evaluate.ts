import {
  BURN_WINDOWS,
  BURN_WINDOW_NAMES,
  budgetRemaining,
  burnRate,
  counterPieces,
  evaluateTiers,
  firingBySeverity,
  sli,
  sloWindowSpan,
  windowEnd,
  type BurnWindow,
  type Counts,
  type TierName,
  type TierResult,
} from '@onset/core';
import type { Pool } from '../db/pool.ts';
import { MINUTE_TRUST_MS, countNewObservations, listSlos, pruneCounters, windowOf, type Queryable, type SloRow } from './store.ts';
import { tiersFrom } from './spec.ts';
import { ALERT_COLUMNS, reconcileSloAlerts, releaseUnsilenced, type AlertRow } from '../alerts/state.ts';

export interface SloStatus {
  evaluated_at: string;
  window_start: string;
  window_end: string;
  /** Share of good events over the SLO window; null without events. */
  sli: number | null;
  good: number;
  total: number;
  budget_remaining: number;
  burn_rates: Record<BurnWindow, number | null>;
  events: Record<BurnWindow, number>;
  tiers: TierResult[];
  alert: null | { id: string; severity: string; since: string; acknowledged: boolean };
  /** Counters before this time were estimated from histograms (created after the raw data expired). */
  exact_since: string | null;
}

export interface Evaluation {
  slo: SloRow;
  windows: Record<BurnWindow, Counts>;
  budget: Counts;
  windowStart: number;
  windowEnd: number;
  tiers: TierResult[];
}

type WindowKey = BurnWindow | 'budget';

/**
 * Read every SLO's burn windows and compliance window from the counters in
 * two queries (minute and hour pieces), then run the burn maths in core.
 */
export async function evaluateSlos(db: Queryable, slos: SloRow[], now: number, realNow = Date.now()): Promise<Evaluation[]> {
  const end = windowEnd(now);
  const minuteHorizon = Math.max(end, windowEnd(realNow)) - MINUTE_TRUST_MS;
  const keys: Array<{ slo: number; key: WindowKey }> = [];
  const mins = { k: [] as number[], slo: [] as string[], f: [] as number[], t: [] as number[] };
  const hours = { k: [] as number[], slo: [] as string[], f: [] as number[], t: [] as number[] };
  const starts: number[] = [];
  slos.forEach((slo, i) => {
    const span = sloWindowSpan(windowOf(slo), now);
    const wins: Array<[WindowKey, number]> = [...BURN_WINDOW_NAMES.map((w): [WindowKey, number] => [w, end - BURN_WINDOWS[w]]), ['budget', span.start]];
    for (const [key, start] of wins) {
      const k = keys.length;
      keys.push({ slo: i, key });
      const { pieces, start: realStart } = counterPieces(start, end, minuteHorizon);
      if (key === 'budget') starts[i] = realStart;
      for (const p of pieces) {
        const dst = p.table === 'minute' ? mins : hours;
        dst.k.push(k);
        dst.slo.push(slo.id);
        dst.f.push(p.from);
        dst.t.push(p.to);
      }
    }
  });
  const sums = new Map<number, Counts>();
  const q = (table: 'slo_minutes' | 'slo_hours', col: 'minute' | 'hour', a: typeof mins) =>
    a.k.length === 0
      ? Promise.resolve({ rows: [] as Array<{ k: number; good: number; total: number }> })
      : db.query<{ k: number; good: number; total: number }>(
          `SELECT p.k, sum(c.good)::float8 AS good, sum(c.total)::float8 AS total
             FROM unnest($1::int[], $2::bigint[], $3::float8[], $4::float8[]) AS p(k, slo_id, f, t)
             JOIN ${table} c ON c.slo_id = p.slo_id AND c.${col} >= to_timestamp(p.f / 1000.0) AND c.${col} < to_timestamp(p.t / 1000.0)
            GROUP BY p.k`,
          [a.k, a.slo, a.f, a.t],
        );
  const [m, h] = await Promise.all([q('slo_minutes', 'minute', mins), q('slo_hours', 'hour', hours)]);
  for (const r of [...m.rows, ...h.rows]) {
    const cur = sums.get(r.k) ?? { good: 0, total: 0 };
    cur.good += r.good;
    cur.total += r.total;
    sums.set(r.k, cur);
  }
  const out: Evaluation[] = slos.map((slo, i) => ({
    slo,
    windows: {} as Record<BurnWindow, Counts>,
    budget: { good: 0, total: 0 },
    windowStart: starts[i]!,
    windowEnd: end,
    tiers: [],
  }));
  keys.forEach(({ slo, key }, k) => {
    const c = sums.get(k) ?? { good: 0, total: 0 };
    if (key === 'budget') out[slo]!.budget = c;
    else out[slo]!.windows[key] = c;
  });
  for (const e of out) {
    const span = sloWindowSpan(windowOf(e.slo), now);
    e.tiers = evaluateTiers(e.windows, {
      objective: e.slo.objective,
      sloWindowMs: span.lengthMs,
      enabled: tiersFrom(e.slo.tiers) as Record<TierName, boolean>,
      guard: { minEvents: e.slo.min_events, minBadEvents: e.slo.min_bad_events },
    });
  }
  return out;
}

export function statusOf(e: Evaluation, now: number, alert: AlertRow | undefined): SloStatus {
  const burn = {} as Record<BurnWindow, number | null>;
  const events = {} as Record<BurnWindow, number>;
  for (const w of BURN_WINDOW_NAMES) {
    burn[w] = burnRate(e.windows[w].good, e.windows[w].total, e.slo.objective);
    events[w] = e.windows[w].total;
  }
  return {
    evaluated_at: new Date(now).toISOString(),
    window_start: new Date(e.windowStart).toISOString(),
    window_end: new Date(e.windowEnd).toISOString(),
    sli: sli(e.budget.good, e.budget.total),
    good: e.budget.good,
    total: e.budget.total,
    budget_remaining: budgetRemaining(e.budget.good, e.budget.total, e.slo.objective),
    burn_rates: burn,
    events,
    tiers: e.tiers,
    alert: alert
      ? { id: alert.id, severity: alert.severity, since: alert.started_at.toISOString(), acknowledged: alert.acknowledged_at !== null }
      : null,
    exact_since: e.slo.exact_since ? e.slo.exact_since.toISOString() : null,
  };
}

/** The most severe firing SLO-burn alert per SLO. */
export async function firingSloAlerts(db: Queryable, sloIds?: string[]): Promise<Map<string, AlertRow>> {
  const { rows } = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts WHERE type = 'slo_burn' AND status = 'firing' ${sloIds ? 'AND slo_id = ANY($1::bigint[])' : ''}`,
    sloIds ? [sloIds] : [],
  );
  const out = new Map<string, AlertRow>();
  for (const a of rows) {
    const cur = out.get(a.slo_id!);
    if (!cur || (a.severity === 'page' && cur.severity !== 'page')) out.set(a.slo_id!, a);
  }
  return out;
}

export async function sloStatuses(db: Queryable, slos: SloRow[], now = Date.now()): Promise<Map<string, SloStatus>> {
  const [evals, alerts] = await Promise.all([evaluateSlos(db, slos, now), firingSloAlerts(db, slos.map((s) => s.id))]);
  return new Map(evals.map((e) => [e.slo.id, statusOf(e, now, alerts.get(e.slo.id))]));
}

export interface PassResult {
  counted: { from: string; to: string; minutes: number } | null;
  slos: number;
  fired: Array<{ alert_id: string; slo_id: string | null; severity: string }>;
  resolved: Array<{ alert_id: string; slo_id: string | null; severity: string }>;
  released: number;
  ms: number;
}

/**
 * The per-minute SLO pass: count new observations, evaluate every SLO as of
 * `now`, move alerts through firing/resolved (writing the webhook outbox in
 * the same transaction). Delivery is a separate pass (webhooks/deliver.ts).
 */
export async function runSloPass(pool: Pool, opts: { now?: number; settleMs?: number } = {}): Promise<PassResult> {
  const t0 = performance.now();
  const now = opts.now ?? Date.now();
  const counted = await countNewObservations(pool, { settleMs: opts.settleMs });
  await pruneCounters(pool);
  const slos = await listSlos(pool);
  const evals = await evaluateSlos(pool, slos, now);
  const changes = await reconcileSloAlerts(pool, evals.map((e) => ({ slo: e.slo, firing: firingBySeverity(e.tiers) })), now);
  const released = await releaseUnsilenced(pool, now);
  return { counted, slos: slos.length, ...changes, released, ms: performance.now() - t0 };
}
