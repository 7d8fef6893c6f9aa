/**
 * The alert state machine, shared by SLO burns and regressions:
 *
 *     (none) --fire--> firing --resolve--> resolved
 *
 * One row per episode; `alert_key` says what it is about (slo:<id>:<severity>,
 * regression:<id>) and at most one episode per key is firing (unique partial
 * index). Every transition writes its history event and its webhook outbox
 * rows in the same transaction, so a committed state change is never lost
 * and is delivered exactly once per webhook (at least once on the wire).
 * A firing alert matched by an active silence is recorded but not sent; it
 * is sent when the silence ends while it still fires.
 */
import { regressionSeverity, type AlertSeverity, type TierResult } from '@onset/core';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import type { Queryable } from '../slos/store.ts';
import { enqueueDeliveries } from '../webhooks/outbox.ts';

export interface AlertRow {
  id: string;
  type: 'slo_burn' | 'regression';
  alert_key: string;
  dedup_key: string;
  severity: AlertSeverity;
  status: 'firing' | 'resolved';
  title: string;
  service: string | null;
  op: string | null;
  view: string | null;
  series_name: string | null;
  slo_id: string | null;
  regression_id: string | null;
  burn_rate: number | null;
  burn_window: string | null;
  details: Record<string, unknown>;
  started_at: Date;
  resolved_at: Date | null;
  notified: boolean;
  silenced_by: string | null;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
  ack_comment: string | null;
  updated_at: Date;
}

export const ALERT_COLUMNS = `id::text, type, alert_key, dedup_key, severity, status, title, service, op, view, series_name,
  slo_id::text, regression_id, burn_rate, burn_window, details, started_at, resolved_at, notified, silenced_by::text,
  acknowledged_at, acknowledged_by, ack_comment, updated_at`;

export interface FireInput {
  type: 'slo_burn' | 'regression';
  alertKey: string;
  severity: AlertSeverity;
  title: string;
  service?: string | null;
  op?: string | null;
  view?: string | null;
  seriesName?: string | null;
  sloId?: string | null;
  regressionId?: string | null;
  burnRate?: number | null;
  burnWindow?: string | null;
  details?: Record<string, unknown>;
}

/** Run in the caller's transaction when given a client, else in a new one. */
async function inTx<T>(db: Queryable, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  if ('release' in db && typeof db.release === 'function') return fn(db as PoolClient);
  return withTransaction(db as Pool, fn);
}

async function addEvent(
  c: Queryable,
  alertId: string,
  kind: string,
  at: number,
  detail: Record<string, unknown> = {},
  actor?: string | null,
): Promise<void> {
  await c.query(
    `INSERT INTO alert_events (alert_id, at, kind, actor, detail) VALUES ($1, $2, $3, $4, $5)`,
    [alertId, new Date(at), kind, actor ?? null, JSON.stringify(detail)],
  );
}

/** Record that a new alert was held by a silence, or sent (notified), with its history event: one round trip. */
async function markAlert(
  c: Queryable,
  alertId: string,
  at: number,
  kind: 'silenced' | 'notified',
  detail: Record<string, unknown>,
  silenceId?: string,
): Promise<void> {
  await c.query(
    `WITH u AS (
       UPDATE alerts SET notified = notified OR $3 = 'notified', silenced_by = COALESCE($5::bigint, silenced_by)
        WHERE id = $1 RETURNING id)
     INSERT INTO alert_events (alert_id, at, kind, detail) SELECT id, $2, $3, $4 FROM u`,
    [alertId, new Date(at), kind, JSON.stringify(detail), silenceId ?? null],
  );
}

/** The active silence matching an alert, if any. */
export async function findSilence(
  db: Queryable,
  a: { service: string | null; slo_id: string | null; op: string | null },
  now: number,
): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM silences
      WHERE starts_at <= $1 AND ends_at > $1
        AND (service IS NULL OR service = $2) AND (slo_id IS NULL OR slo_id = $3::bigint) AND (op IS NULL OR op = $4)
      ORDER BY ends_at DESC LIMIT 1`,
    [new Date(now), a.service, a.slo_id, a.op],
  );
  return rows[0]?.id ?? null;
}

/** Start an episode for `alertKey` unless one is firing; refresh its numbers if it is. */
export async function fireAlert(
  db: Queryable,
  input: FireInput,
  now = Date.now(),
): Promise<{ alert: AlertRow; created: boolean }> {
  return inTx(db, async (c) => {
    const ins = await c.query<AlertRow>(
      `WITH n AS (SELECT nextval(pg_get_serial_sequence('alerts', 'id')) AS id)
       INSERT INTO alerts (id, type, alert_key, dedup_key, severity, status, title, service, op, view, series_name,
                           slo_id, regression_id, burn_rate, burn_window, details, started_at, updated_at)
       SELECT n.id, $1, $2, 'onset-alert-' || n.id, $3, 'firing', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14 FROM n
       ON CONFLICT (alert_key) WHERE status = 'firing' DO NOTHING
       RETURNING ${ALERT_COLUMNS}`,
      [
        input.type,
        input.alertKey,
        input.severity,
        input.title,
        input.service ?? null,
        input.op ?? null,
        input.view ?? null,
        input.seriesName ?? null,
        input.sloId ?? null,
        input.regressionId ?? null,
        input.burnRate ?? null,
        input.burnWindow ?? null,
        JSON.stringify(input.details ?? {}),
        new Date(now),
      ],
    );
    if (!ins.rows[0]) {
      const upd = await c.query<AlertRow>(
        `UPDATE alerts SET burn_rate = $2, burn_window = $3, details = $4, updated_at = $5
          WHERE alert_key = $1 AND status = 'firing' RETURNING ${ALERT_COLUMNS}`,
        [
          input.alertKey,
          input.burnRate ?? null,
          input.burnWindow ?? null,
          JSON.stringify(input.details ?? {}),
          new Date(now),
        ],
      );
      return { alert: upd.rows[0]!, created: false };
    }
    let alert = ins.rows[0];
    await addEvent(c, alert.id, 'firing', now, {
      severity: alert.severity,
      burn_rate: alert.burn_rate,
      window: alert.burn_window,
    });
    const silence = await findSilence(c, alert, now);
    if (silence) {
      await markAlert(c, alert.id, now, 'silenced', { silence_id: silence }, silence);
      alert = { ...alert, silenced_by: silence };
    } else {
      const n = await enqueueDeliveries(c, alert, 'firing', now);
      await markAlert(c, alert.id, now, 'notified', { webhooks: n });
      alert = { ...alert, notified: true };
    }
    return { alert, created: true };
  });
}

/** End the firing episode of `alertKey`, if any; webhooks that got its firing get its resolved. */
export async function resolveAlert(
  db: Queryable,
  alertKey: string,
  now = Date.now(),
  detail: Record<string, unknown> = {},
): Promise<AlertRow | null> {
  return inTx(db, async (c) => {
    const { rows } = await c.query<AlertRow>(
      `UPDATE alerts SET status = 'resolved', resolved_at = $2, updated_at = $2
        WHERE alert_key = $1 AND status = 'firing' RETURNING ${ALERT_COLUMNS}`,
      [alertKey, new Date(now)],
    );
    const alert = rows[0];
    if (!alert) return null;
    await addEvent(c, alert.id, 'resolved', now, detail);
    await enqueueDeliveries(c, alert, 'resolved', now);
    return alert;
  });
}

/** Alert transitions run concurrently up to this many (a mass incident fires hundreds at once). */
const TRANSITION_CONCURRENCY = 6;

export const sloAlertKey = (sloId: string, severity: AlertSeverity) => `slo:${sloId}:${severity}`;

function round(x: number | null): number | null {
  return x === null ? null : Number(x.toPrecision(4));
}

/** Bring SLO-burn alerts in line with an evaluation: fire what burns, resolve what stopped. */
export async function reconcileSloAlerts(
  pool: Pool,
  evals: Array<{
    slo: {
      id: string;
      name: string;
      service: string;
      op: string | null;
      view: string | null;
      threshold_us: number;
      objective: number;
      window_text: string;
    };
    firing: Map<AlertSeverity, TierResult>;
  }>,
  now: number,
): Promise<{
  fired: Array<{ alert_id: string; slo_id: string | null; severity: string }>;
  resolved: Array<{ alert_id: string; slo_id: string | null; severity: string }>;
}> {
  const { rows: open } = await pool.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts WHERE type = 'slo_burn' AND status = 'firing'`,
  );
  const openByKey = new Map(open.map((a) => [a.alert_key, a]));
  const fired: Array<{ alert_id: string; slo_id: string | null; severity: string }> = [];
  const resolved: typeof fired = [];
  const refresh = {
    keys: [] as string[],
    rate: [] as Array<number | null>,
    window: [] as string[],
    details: [] as string[],
  };
  const seen = new Set<string>();
  const actions: Array<() => Promise<void>> = [];
  for (const { slo, firing } of evals) {
    for (const severity of ['page', 'ticket'] as const) {
      const key = sloAlertKey(slo.id, severity);
      seen.add(key);
      const tier = firing.get(severity);
      const have = openByKey.get(key);
      if (tier) {
        const details = {
          slo_name: slo.name,
          threshold_ms: slo.threshold_us / 1000,
          objective: slo.objective,
          slo_window: slo.window_text,
          tier: tier.name,
          factor: tier.factor,
          long_window: tier.long,
          short_window: tier.short,
          burn_long: round(tier.burn_long),
          burn_short: round(tier.burn_short),
          events_long: tier.events_long,
          events_short: tier.events_short,
        };
        if (!have) {
          actions.push(async () => {
            const { alert } = await fireAlert(
              pool,
              {
                type: 'slo_burn',
                alertKey: key,
                severity,
                title: `SLO "${slo.name}" is burning its error budget at ${round(tier.burn_long)}× over ${tier.long}`,
                service: slo.service,
                op: slo.op,
                view: slo.view,
                sloId: slo.id,
                burnRate: round(tier.burn_long),
                burnWindow: tier.long,
                details,
              },
              now,
            );
            fired.push({ alert_id: alert.id, slo_id: slo.id, severity });
          });
        } else {
          refresh.keys.push(key);
          refresh.rate.push(round(tier.burn_long));
          refresh.window.push(tier.long);
          refresh.details.push(JSON.stringify(details));
        }
      } else if (have) {
        actions.push(async () => {
          const a = await resolveAlert(pool, key, now, {
            reason: 'burn rate back under the threshold',
          });
          if (a) resolved.push({ alert_id: a.id, slo_id: slo.id, severity });
        });
      }
    }
  }
  // SLOs that no longer exist stop burning.
  for (const a of open) {
    if (seen.has(a.alert_key)) continue;
    actions.push(async () => {
      const r = await resolveAlert(pool, a.alert_key, now, { reason: 'SLO deleted' });
      if (r) resolved.push({ alert_id: r.id, slo_id: r.slo_id, severity: r.severity });
    });
  }
  // Each transition is its own transaction on its own alert key: a few at a time.
  let next = 0;
  const worker = async () => {
    while (next < actions.length) await actions[next++]!();
  };
  await Promise.all(
    Array.from({ length: Math.min(TRANSITION_CONCURRENCY, actions.length) }, worker),
  );
  if (refresh.keys.length) {
    await pool.query(
      `UPDATE alerts a SET burn_rate = u.rate, burn_window = u.win, details = u.details::jsonb, updated_at = $5
         FROM unnest($1::text[], $2::float8[], $3::text[], $4::text[]) AS u(key, rate, win, details)
        WHERE a.alert_key = u.key AND a.status = 'firing'`,
      [refresh.keys, refresh.rate, refresh.window, refresh.details, new Date(now)],
    );
  }
  return { fired, resolved };
}

/** Firing alerts held back by a silence that has since ended are sent now. */
export async function releaseUnsilenced(pool: Pool, now: number): Promise<number> {
  const { rows } = await pool.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts WHERE status = 'firing' AND NOT notified`,
  );
  let released = 0;
  for (const a of rows) {
    if (await findSilence(pool, a, now)) continue;
    await withTransaction(pool, async (c) => {
      const claim = await c.query(
        `UPDATE alerts SET notified = true WHERE id = $1 AND NOT notified AND status = 'firing'`,
        [a.id],
      );
      if (!claim.rowCount) return;
      const n = await enqueueDeliveries(c, a, 'firing', now);
      await addEvent(c, a.id, 'notified', now, { webhooks: n, reason: 'silence ended' });
      released++;
    });
  }
  return released;
}

export async function acknowledgeAlert(
  db: Queryable,
  id: string,
  by: string | null,
  comment: string | null,
  now = Date.now(),
): Promise<AlertRow | null> {
  if (!/^\d{1,18}$/.test(id)) return null;
  return inTx(db, async (c) => {
    const { rows } = await c.query<AlertRow>(
      `UPDATE alerts SET acknowledged_at = $2, acknowledged_by = $3, ack_comment = $4, updated_at = $2
        WHERE id = $1 RETURNING ${ALERT_COLUMNS}`,
      [id, new Date(now), by, comment],
    );
    if (!rows[0]) return null;
    await addEvent(c, id, 'acknowledged', now, comment ? { comment } : {}, by);
    return rows[0];
  });
}

// ---------------------------------------------------------------- regressions

/** What the regression engine knows about a regression (api.md "Regressions" shape; extra fields ignored). */
export interface RegressionForAlert {
  id: string | number;
  service: string;
  op: string;
  view: string;
  name: string;
  peer?: string | null;
  host?: string | null;
  onset?: string | Date | null;
  before?: { p50_ms?: number; p99_ms?: number; count?: number } | null;
  after?: { p50_ms?: number; p99_ms?: number; count?: number } | null;
  ratio_p50?: number | null;
  ratio_p99?: number | null;
  suspects?: Array<Record<string, unknown>> | null;
  cohort?: Record<string, unknown> | null;
}

/** SLOs whose selector covers the regression's series. */
async function touchedSlos(
  db: Queryable,
  r: RegressionForAlert,
): Promise<Array<{ id: string; name: string; threshold_ms: number }>> {
  const { rows } = await db.query<{ id: string; name: string; threshold_us: number }>(
    `SELECT o.id::text, o.name, o.threshold_us FROM slos o
      WHERE o.service = $1 AND (o.op IS NULL OR o.op = $2) AND (o.view IS NULL OR o.view = $3)
        AND (o.peer IS NULL OR o.peer = $5) AND (o.name_match IS NULL OR $4 ~ o.name_match)
        AND (o.series_id IS NULL OR o.series_id IN
             (SELECT id FROM series WHERE service = $1 AND op = $2 AND view = $3 AND name = $4 AND peer = $5))
      ORDER BY o.id`,
    [r.service, r.op, r.view, r.name, r.peer ?? ''],
  );
  return rows.map((x) => ({ id: x.id, name: x.name, threshold_ms: x.threshold_us / 1000 }));
}

const fmt = (x: number | undefined | null) =>
  x === undefined || x === null ? '?' : Number(x.toPrecision(3)).toString();

/**
 * Raise (or refresh) the alert for a newly detected regression. Severity:
 * page when the regression pushes the p99 of a series an SLO watches past
 * that SLO's threshold, or when latency grew ≥ 10× (p50 or p99); ticket
 * otherwise. Idempotent per regression id. Pass a PoolClient to run inside
 * the caller's transaction.
 */
export async function raiseRegressionAlert(
  db: Queryable,
  regression: RegressionForAlert,
  opts: { now?: number } = {},
): Promise<AlertRow> {
  const now = opts.now ?? Date.now();
  const touched = await touchedSlos(db, regression);
  const severity = regressionSeverity(
    {
      ratio_p50: regression.ratio_p50 ?? null,
      ratio_p99: regression.ratio_p99 ?? null,
      after_p99_ms: regression.after?.p99_ms ?? null,
    },
    touched.map((t) => t.threshold_ms),
  );
  const ratio = Math.max(regression.ratio_p50 ?? 0, regression.ratio_p99 ?? 0);
  const edge = regression.peer ? ` → ${regression.peer}` : '';
  const title =
    `Regression: ${regression.service} ${regression.op} "${regression.name}"${edge} (${regression.view})` +
    ` p99 ${fmt(regression.before?.p99_ms)} → ${fmt(regression.after?.p99_ms)} ms (×${fmt(ratio || null)})`;
  const { alert } = await fireAlert(
    db,
    {
      type: 'regression',
      alertKey: `regression:${regression.id}`,
      severity,
      title,
      service: regression.service,
      op: regression.op,
      view: regression.view,
      seriesName: regression.name,
      regressionId: String(regression.id),
      details: {
        peer: regression.peer ?? null,
        host: regression.host ?? null,
        onset:
          regression.onset instanceof Date
            ? regression.onset.toISOString()
            : (regression.onset ?? null),
        before: regression.before ?? null,
        after: regression.after ?? null,
        ratio_p50: regression.ratio_p50 ?? null,
        ratio_p99: regression.ratio_p99 ?? null,
        touched_slos: touched,
        suspect: regression.suspects?.[0] ?? null,
        cohort: regression.cohort ?? null,
      },
    },
    now,
  );
  return alert;
}

/** Resolve the alert of a regression (e.g. latency returned, or marked fixed). */
export async function resolveRegressionAlert(
  db: Queryable,
  regressionId: string | number,
  opts: { now?: number; reason?: string } = {},
): Promise<AlertRow | null> {
  return resolveAlert(db, `regression:${regressionId}`, opts.now ?? Date.now(), {
    reason: opts.reason ?? 'regression resolved',
  });
}
