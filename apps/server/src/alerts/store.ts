/**
 * Every query on the `alerts` and `alert_events` tables (plus the silence
 * lookup that decides whether a new alert is sent). Nothing else in the
 * server names these tables: the state machine (state.ts), the SLO and
 * regression alerting policies and the routes all come through here.
 */
import type { Queryable } from '../db/pool.ts';
import type { AlertStatus, AlertType, Severity } from '@onset/contract';
import { activeSilences, silenceFor } from './silences.ts';

export interface AlertRow {
  id: string;
  type: AlertType;
  alert_key: string;
  dedup_key: string;
  severity: Severity;
  status: AlertStatus;
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

const ALERT_COLUMNS = `id::text, type, alert_key, dedup_key, severity, status, title, service, op, view, series_name,
  slo_id::text, regression_id, burn_rate, burn_window, details, started_at, resolved_at, notified, silenced_by::text,
  acknowledged_at, acknowledged_by, ack_comment, updated_at`;

export interface FireInput {
  type: AlertType;
  alertKey: string;
  severity: Severity;
  /** The stored heading (state.ts renders it with alerts/text.ts; a kind without a renderer gives its own). */
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

/** Insert a firing episode for the key; null when one is already firing (unique partial index). */
export async function insertFiring(
  c: Queryable,
  input: FireInput,
  now: number,
): Promise<AlertRow | null> {
  const { rows } = await c.query<AlertRow>(
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
  return rows[0] ?? null;
}

/**
 * New numbers for the firing episode of a key, and what it is about when that
 * moved (a regression re-headlined on another series of its incident, or
 * merged with another: its service, view and series are the new headline's).
 */
export async function refreshFiring(
  c: Queryable,
  input: Pick<
    FireInput,
    | 'alertKey'
    | 'title'
    | 'burnRate'
    | 'burnWindow'
    | 'details'
    | 'service'
    | 'op'
    | 'view'
    | 'seriesName'
  >,
  now: number,
): Promise<AlertRow | null> {
  const { rows } = await c.query<AlertRow>(
    `UPDATE alerts SET burn_rate = $2, burn_window = $3, details = $4, updated_at = $5, title = $6,
            service = coalesce($7, service), op = coalesce($8, op), view = coalesce($9, view),
            series_name = coalesce($10, series_name)
      WHERE alert_key = $1 AND status = 'firing' RETURNING ${ALERT_COLUMNS}`,
    [
      input.alertKey,
      input.burnRate ?? null,
      input.burnWindow ?? null,
      JSON.stringify(input.details ?? {}),
      new Date(now),
      input.title,
      input.service ?? null,
      input.op ?? null,
      input.view ?? null,
      input.seriesName ?? null,
    ],
  );
  return rows[0] ?? null;
}

/** The same refresh for many keys in one statement (every SLO that keeps burning, each minute). */
export async function refreshFiringMany(
  db: Queryable,
  refresh: {
    keys: string[];
    rate: Array<number | null>;
    window: string[];
    details: string[];
    titles: string[];
  },
  now: number,
): Promise<void> {
  if (!refresh.keys.length) return;
  await db.query(
    `UPDATE alerts a SET burn_rate = u.rate, burn_window = u.win, details = u.details::jsonb, title = u.title, updated_at = $5
       FROM unnest($1::text[], $2::float8[], $3::text[], $4::text[], $6::text[]) AS u(key, rate, win, details, title)
      WHERE a.alert_key = u.key AND a.status = 'firing'`,
    [refresh.keys, refresh.rate, refresh.window, refresh.details, new Date(now), refresh.titles],
  );
}

/** End the firing episode of a key; null when none fires. */
export async function markResolved(
  c: Queryable,
  alertKey: string,
  now: number,
): Promise<AlertRow | null> {
  const { rows } = await c.query<AlertRow>(
    `UPDATE alerts SET status = 'resolved', resolved_at = $2, updated_at = $2
      WHERE alert_key = $1 AND status = 'firing' RETURNING ${ALERT_COLUMNS}`,
    [alertKey, new Date(now)],
  );
  return rows[0] ?? null;
}

export async function markAcknowledged(
  c: Queryable,
  id: string,
  by: string | null,
  comment: string | null,
  now: number,
): Promise<AlertRow | null> {
  const { rows } = await c.query<AlertRow>(
    `UPDATE alerts SET acknowledged_at = $2, acknowledged_by = $3, ack_comment = $4, updated_at = $2
      WHERE id = $1 RETURNING ${ALERT_COLUMNS}`,
    [id, new Date(now), by, comment],
  );
  return rows[0] ?? null;
}

/**
 * Record that a new alert was held by a silence, or sent (notified), with its
 * history event: one round trip.
 */
export async function markHeldOrSent(
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

/** Claim a firing, unsent alert for sending; false when another pass got it first. */
export async function claimNotification(c: Queryable, alertId: string): Promise<boolean> {
  const claim = await c.query(
    `UPDATE alerts SET notified = true WHERE id = $1 AND NOT notified AND status = 'firing'`,
    [alertId],
  );
  return (claim.rowCount ?? 0) > 0;
}

export async function addEvent(
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

/** Firing alerts of one type (optionally only those of some SLOs). */
export async function firingAlerts(
  db: Queryable,
  type: AlertType,
  sloIds?: string[],
): Promise<AlertRow[]> {
  const { rows } = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts WHERE type = $1 AND status = 'firing'
        ${sloIds ? 'AND slo_id = ANY($2::bigint[])' : ''}`,
    sloIds ? [type, sloIds] : [type],
  );
  return rows;
}

/** Firing alerts that were never sent (held by a silence). */
export async function unsentFiringAlerts(db: Queryable): Promise<AlertRow[]> {
  const { rows } = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts WHERE status = 'firing' AND NOT notified`,
  );
  return rows;
}

/** The id of the episode firing for a key, if any (optionally only when not yet acknowledged). */
/** The ids of every alert firing now. */
export async function firingAlertIds(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM alerts WHERE status = 'firing' ORDER BY id`,
  );
  return rows.map((r) => r.id);
}

export async function firingAlertId(
  db: Queryable,
  alertKey: string,
  opts: { unacknowledged?: boolean } = {},
): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM alerts WHERE alert_key = $1 AND status = 'firing'
        ${opts.unacknowledged ? 'AND acknowledged_at IS NULL' : ''}`,
    [alertKey],
  );
  return rows[0]?.id ?? null;
}

export interface AlertFilter {
  status?: AlertStatus;
  type?: AlertType;
  severity?: Severity;
  service?: string;
  slo_id?: string;
  regression_id?: string;
  /** Started or resolved at or after this instant. */
  since?: Date;
  limit: number;
}

/** Alert history, newest first. */
export async function listAlerts(db: Queryable, f: AlertFilter): Promise<AlertRow[]> {
  const args: unknown[] = [];
  const where: string[] = [];
  const add = (sql: string, v: unknown) => {
    args.push(v);
    where.push(sql.replaceAll('?', `$${args.length}`));
  };
  if (f.status) add('status = ?', f.status);
  if (f.type) add('type = ?', f.type);
  if (f.severity) add('severity = ?', f.severity);
  if (f.service) add('service = ?', f.service);
  if (f.slo_id) add('slo_id = ?::bigint', f.slo_id);
  if (f.regression_id) add('regression_id = ?', f.regression_id);
  if (f.since) add('(started_at >= ? OR resolved_at >= ?)', f.since);
  args.push(f.limit);
  const { rows } = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM alerts ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
      ORDER BY started_at DESC, id DESC LIMIT $${args.length}`,
    args,
  );
  return rows;
}

export async function getAlert(db: Queryable, id: string): Promise<AlertRow | null> {
  const { rows } = await db.query<AlertRow>(`SELECT ${ALERT_COLUMNS} FROM alerts WHERE id = $1`, [
    id,
  ]);
  return rows[0] ?? null;
}

export interface AlertEvent {
  at: Date;
  kind: string;
  actor: string | null;
  detail: Record<string, unknown>;
}

/** One alert's history, oldest first. */
export async function alertEvents(db: Queryable, id: string): Promise<AlertEvent[]> {
  const { rows } = await db.query<AlertEvent>(
    `SELECT at, kind, actor, detail FROM alert_events WHERE alert_id = $1 ORDER BY id`,
    [id],
  );
  return rows;
}

/** Each alert's last reopen (when, by whom, why), from its history: alerts never reopened are left out. */
export async function lastReopens(
  db: Queryable,
  ids: string[],
): Promise<Map<string, { at: Date; by: string | null; comment: string | null }>> {
  const out = new Map<string, { at: Date; by: string | null; comment: string | null }>();
  if (!ids.length) return out;
  const { rows } = await db.query<{
    alert_id: string;
    at: Date;
    actor: string | null;
    comment: string | null;
  }>(
    `SELECT DISTINCT ON (alert_id) alert_id::text, at, actor, detail->>'comment' AS comment
       FROM alert_events WHERE alert_id = ANY($1::bigint[]) AND kind = 'reopened'
      ORDER BY alert_id, id DESC`,
    [ids],
  );
  for (const r of rows) out.set(r.alert_id, { at: r.at, by: r.actor, comment: r.comment });
  return out;
}

/** The active silence matching an alert, if any (the matching rule: silences.ts). */
export async function findSilence(
  db: Queryable,
  a: { service: string | null; slo_id: string | null; op: string | null },
  now: number,
): Promise<string | null> {
  return silenceFor(await activeSilences(db, now), a)?.id ?? null;
}

/** Mark the firing alerts a silence matches as silenced by it; their ids. */
export async function markSilenced(
  c: Queryable,
  silence: { id: string; service: string | null; slo_id: string | null; op: string | null },
): Promise<string[]> {
  const { rows } = await c.query<{ id: string }>(
    `UPDATE alerts SET silenced_by = $1
      WHERE status = 'firing' AND silenced_by IS DISTINCT FROM $1::bigint
        AND ($2::text IS NULL OR service = $2) AND ($3::bigint IS NULL OR slo_id = $3::bigint)
        AND ($4::text IS NULL OR op = $4)
      RETURNING id::text`,
    [silence.id, silence.service, silence.slo_id, silence.op],
  );
  return rows.map((r) => r.id);
}

/** Firing alerts marked silenced by one silence. */
export async function firingSilencedBy(db: Queryable, silenceId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM alerts WHERE status = 'firing' AND silenced_by = $1::bigint`,
    [silenceId],
  );
  return rows.map((r) => r.id);
}

/** Was an episode ever raised for this key (firing, acknowledged or resolved)? */
export async function alertEverRaised(db: Queryable, alertKey: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM alerts WHERE alert_key = $1 LIMIT 1`, [alertKey]);
  return rows.length > 0;
}
