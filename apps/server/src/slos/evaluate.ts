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
import type { AlertNotification, AlertPaging, Severity } from '@onset/contract';
import type { Pool, Queryable } from '../db/pool.ts';
import { MINUTE_TRUST_MS, countNewObservations, listSlos, windowOf, type SloRow } from './store.ts';
import { tiersFrom } from './spec.ts';
import { releaseUnsilenced } from '../alerts/state.ts';
import type { AlertRow } from '../alerts/store.ts';
import { notificationsFor, pagingOf } from '../alerts/notifications.ts';
import { firingSloAlerts, reconcileSloAlerts } from './alerting.ts';
import { detectBudget } from '../config.ts';

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
  alert: null | {
    id: string;
    severity: Severity;
    since: string;
    acknowledged: boolean;
    paging: AlertPaging;
    notifications: AlertNotification[];
  };
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
 * three queries (minute, hour and day pieces), then run the burn maths in core.
 */
export async function evaluateSlos(
  db: Queryable,
  slos: SloRow[],
  now: number,
  realNow = Date.now(),
): Promise<Evaluation[]> {
  const end = windowEnd(now);
  const minuteHorizon = Math.max(end, windowEnd(realNow)) - MINUTE_TRUST_MS;
  // Windows of one SLO share pieces (every window ≥ 1 h ends with the current
  // hour's minutes): each distinct piece is read once and added to every
  // window that contains it.
  const keys: Array<{ slo: number; key: WindowKey }> = [];
  const pieceIndex = new Map<string, number>();
  const users: number[][] = [];
  const reads = { minute: newReads(), hour: newReads(), day: newReads() };
  const starts: number[] = [];
  slos.forEach((slo, i) => {
    const span = sloWindowSpan(windowOf(slo), now);
    const wins: Array<[WindowKey, number]> = [
      ...BURN_WINDOW_NAMES.map((w): [WindowKey, number] => [w, end - BURN_WINDOWS[w]]),
      ['budget', span.start],
    ];
    for (const [key, start] of wins) {
      const k = keys.length;
      keys.push({ slo: i, key });
      const { pieces, start: realStart } = counterPieces(start, end, minuteHorizon);
      if (key === 'budget') starts[i] = realStart;
      for (const p of pieces) {
        const id = `${slo.id}|${p.table}|${p.from}|${p.to}`;
        let pi = pieceIndex.get(id);
        if (pi === undefined) {
          pi = users.length;
          pieceIndex.set(id, pi);
          users.push([]);
          const r = reads[p.table];
          r.p.push(pi);
          r.slo.push(slo.id);
          r.f.push(p.from);
          r.t.push(p.to);
        }
        users[pi]!.push(k);
      }
    }
  });
  const q = (table: string, col: string, a: Reads) =>
    a.p.length === 0
      ? Promise.resolve({ rows: [] as Array<{ p: number; good: number; total: number }> })
      : db.query<{ p: number; good: number; total: number }>(
          `SELECT x.p, sum(c.good)::float8 AS good, sum(c.total)::float8 AS total
             FROM unnest($1::int[], $2::bigint[], $3::float8[], $4::float8[]) AS x(p, slo_id, f, t)
             JOIN ${table} c ON c.slo_id = x.slo_id AND c.${col} >= to_timestamp(x.f / 1000.0) AND c.${col} < to_timestamp(x.t / 1000.0)
            GROUP BY x.p`,
          [a.p, a.slo, a.f, a.t],
        );
  // Chunks so the reads spread over the pool's connections (and the database's cores).
  const jobs: Array<ReturnType<typeof q>> = [];
  for (const [table, col, r] of [
    ['slo_minutes', 'minute', reads.minute],
    ['slo_hours', 'hour', reads.hour],
    ['slo_days', 'day', reads.day],
  ] as const) {
    for (let i = 0; i < r.p.length; i += READ_CHUNK) {
      const part = {
        p: r.p.slice(i, i + READ_CHUNK),
        slo: r.slo.slice(i, i + READ_CHUNK),
        f: r.f.slice(i, i + READ_CHUNK),
        t: r.t.slice(i, i + READ_CHUNK),
      };
      jobs.push(q(table, col, part));
    }
  }
  const results = await Promise.all(jobs);
  const sums = new Map<number, Counts>();
  for (const r of results.flatMap((x) => x.rows)) {
    for (const k of users[r.p]!) {
      const cur = sums.get(k) ?? { good: 0, total: 0 };
      cur.good += r.good;
      cur.total += r.total;
      sums.set(k, cur);
    }
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

interface Reads {
  p: number[];
  slo: string[];
  f: number[];
  t: number[];
}
const newReads = (): Reads => ({ p: [], slo: [], f: [], t: [] });
const READ_CHUNK = 2500;

function statusOf(
  e: Evaluation,
  now: number,
  alert: AlertRow | undefined,
  notifications: AlertNotification[] = [],
): SloStatus {
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
      ? {
          id: alert.id,
          severity: alert.severity,
          since: alert.started_at.toISOString(),
          acknowledged: alert.acknowledged_at !== null,
          paging: pagingOf(alert, notifications),
          notifications,
        }
      : null,
    exact_since: e.slo.exact_since ? e.slo.exact_since.toISOString() : null,
  };
}

export async function sloStatuses(
  db: Queryable,
  slos: SloRow[],
  now = Date.now(),
): Promise<Map<string, SloStatus>> {
  const [evals, alerts] = await Promise.all([
    evaluateSlos(db, slos, now),
    firingSloAlerts(
      db,
      slos.map((s) => s.id),
    ),
  ]);
  const notes = await notificationsFor(
    db,
    [...alerts.values()].map((a) => a.id),
  );
  return new Map(
    evals.map((e) => {
      const alert = alerts.get(e.slo.id);
      return [e.slo.id, statusOf(e, now, alert, alert ? notes.get(alert.id) : [])];
    }),
  );
}

export interface PassResult {
  counted: { from: string; to: string; minutes: number } | null;
  slos: number;
  fired: Array<{ alert_id: string; slo_id: string | null; severity: string }>;
  resolved: Array<{ alert_id: string; slo_id: string | null; severity: string }>;
  released: number;
  ms: number;
  phases_ms: { count: number; evaluate: number; alerts: number };
}

export interface SloPassProgress {
  started_at: string;
  slos_done: number;
  slos_total: number;
}

const running = new WeakMap<Pool, SloPassProgress>();

/** The SLO evaluation running in this process on this pool, if any (for the scheduler's log). */
export function sloProgressOf(pool: Pool): SloPassProgress | null {
  const p = running.get(pool);
  return p ? { ...p } : null;
}

/**
 * The per-minute SLO pass: count new observations, evaluate every SLO as of
 * `now`, move alerts through firing/resolved (writing the webhook outbox in
 * the same transaction). Delivery is a separate pass (webhooks/deliver.ts),
 * and so is pruning old counters (pruneCounters, hourly).
 */
export async function runSloPass(
  pool: Pool,
  opts: { now?: number; settleMs?: number } = {},
): Promise<PassResult> {
  const t0 = performance.now();
  const now = opts.now ?? Date.now();
  const counted = await countNewObservations(pool, { settleMs: opts.settleMs });
  const t1 = performance.now();
  const slos = await listSlos(pool);
  // Evaluated `sloBatch` SLOs at a time (budget.ts); only each one's firing tiers are kept.
  const { sloBatch } = detectBudget();
  const firing: Array<{ slo: SloRow; firing: ReturnType<typeof firingBySeverity> }> = [];
  const progress = { started_at: new Date().toISOString(), slos_done: 0, slos_total: slos.length };
  running.set(pool, progress);
  try {
    for (let i = 0; i < slos.length; i += sloBatch) {
      for (const e of await evaluateSlos(pool, slos.slice(i, i + sloBatch), now))
        firing.push({ slo: e.slo, firing: firingBySeverity(e.tiers) });
      progress.slos_done = firing.length;
    }
  } finally {
    running.delete(pool);
  }
  const t2 = performance.now();
  // Transitions are dated when they happen: after evaluating every SLO, not at the pass's start.
  const at = opts.now ?? Date.now();
  const changes = await reconcileSloAlerts(pool, firing, at);
  const released = await releaseUnsilenced(pool, at);
  const t3 = performance.now();
  const r = (x: number) => Math.round(x);
  return {
    counted,
    slos: slos.length,
    ...changes,
    released,
    ms: r(t3 - t0),
    phases_ms: { count: r(t1 - t0), evaluate: r(t2 - t1), alerts: r(t3 - t2) },
  };
}
