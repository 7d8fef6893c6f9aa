import { GAMMA, ZERO_BUCKET, type SloWindow } from '@onset/core';
import { withTransaction, type Pool, type PoolClient, type Queryable } from '../db/pool.ts';
import { HttpError, badRequest } from '../http/errors.ts';
import { thresholdUs, tiersFrom, type SloCommon, type SloSpec } from './spec.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Per-minute counters cover the longest burn window (3 d) with room to spare. */
const MINUTE_KEEP_MS = 3 * DAY_MS + 2 * HOUR_MS;
/** Evaluation trusts minute counters this far back (a little inside MINUTE_KEEP_MS). */
export const MINUTE_TRUST_MS = 3 * DAY_MS + HOUR_MS;
/**
 * How far behind the clock the counting cursor stays: covers the instant
 * between a transaction taking its now() and showing up in pg_stat_activity.
 */
const SETTLE_MS = 250;
/** Longest calendar period (31 d) plus slack, for retention of hourly counters. */
const CALENDAR_KEEP_MS = 33 * DAY_MS;

export interface SloRow extends SloCommon {
  id: string;
  threshold_us: number;
  window_text: string;
  window_kind: 'rolling' | 'calendar';
  window_ms: number | null;
  calendar_unit: 'day' | 'week' | 'month' | null;
  time_zone: string;
  tiers: Record<string, boolean>;
  source: string;
  openslo: string | null;
  exact_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id::text, name, description, service, op, view, name_match, peer, series_id::text, threshold_us, objective,
  window_text, window_kind, window_ms, calendar_unit, time_zone, tiers, min_events, min_bad_events, labels, source, openslo,
  exact_since, created_at, updated_at`;

/** Series selector: which series an SLO (alias o) watches (series alias s). */
export const MATCH_SQL = `s.service = o.service
  AND (o.op IS NULL OR s.op = o.op) AND (o.view IS NULL OR s.view = o.view)
  AND (o.peer IS NULL OR s.peer = o.peer) AND (o.series_id IS NULL OR s.id = o.series_id)
  AND (o.name_match IS NULL OR s.name ~ o.name_match)`;

export function windowOf(r: SloRow): SloWindow {
  return r.window_kind === 'rolling'
    ? { kind: 'rolling', ms: Number(r.window_ms), text: r.window_text }
    : { kind: 'calendar', unit: r.calendar_unit!, timeZone: r.time_zone, text: r.window_text };
}

export interface SloJson extends SloCommon {
  id: string;
  threshold_ms: number;
  window: string;
  calendar: boolean;
  time_zone: string;
  alert_tiers: Record<string, boolean>;
  source: string;
  exact_since: string | null;
  created_at: string;
  updated_at: string;
}

export function sloJson(r: SloRow): SloJson {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    service: r.service,
    op: r.op,
    view: r.view,
    name_match: r.name_match,
    peer: r.peer,
    series_id: r.series_id,
    threshold_ms: r.threshold_us / 1000,
    objective: r.objective,
    window: r.window_text,
    calendar: r.window_kind === 'calendar',
    time_zone: r.time_zone,
    alert_tiers: tiersFrom(r.tiers),
    min_events: r.min_events,
    min_bad_events: r.min_bad_events,
    labels: r.labels,
    source: r.source,
    exact_since: r.exact_since ? r.exact_since.toISOString() : null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export async function listSlos(
  db: Queryable,
  f: { service?: string; ids?: string[] } = {},
): Promise<SloRow[]> {
  const args: unknown[] = [];
  const where: string[] = [];
  if (f.service) {
    args.push(f.service);
    where.push(`service = $${args.length}`);
  }
  if (f.ids) {
    args.push(f.ids);
    where.push(`id = ANY($${args.length}::bigint[])`);
  }
  const { rows } = await db.query<SloRow>(
    `SELECT ${COLUMNS} FROM slos ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY id`,
    args,
  );
  return rows.map(fixRow);
}

export async function getSlo(db: Queryable, id: string): Promise<SloRow | null> {
  if (!/^\d{1,18}$/.test(id)) return null;
  const { rows } = await db.query<SloRow>(`SELECT ${COLUMNS} FROM slos WHERE id = $1`, [id]);
  return rows[0] ? fixRow(rows[0]) : null;
}

function fixRow(r: SloRow): SloRow {
  return { ...r, window_ms: r.window_ms === null ? null : Number(r.window_ms) };
}

/** Reject a name_match PostgreSQL cannot compile (400, not 500 on first use). */
async function checkRegex(db: Queryable, re: string | null): Promise<void> {
  if (re === null) return;
  try {
    await db.query(`SELECT '' ~ $1`, [re]);
  } catch (e) {
    throw badRequest(`name_match is not a valid regular expression: ${(e as Error).message}`);
  }
}

function specParams(spec: SloSpec): unknown[] {
  const w = spec.window;
  return [
    spec.name,
    spec.description,
    spec.service,
    spec.op,
    spec.view,
    spec.name_match,
    spec.peer,
    spec.series_id,
    thresholdUs(spec.threshold_ms),
    spec.objective,
    w.text,
    w.kind,
    w.kind === 'rolling' ? w.ms : null,
    w.kind === 'calendar' ? w.unit : null,
    w.kind === 'calendar' ? w.timeZone : 'UTC',
    JSON.stringify(spec.alert_tiers),
    spec.min_events,
    spec.min_bad_events,
    JSON.stringify(spec.labels),
    spec.source,
    spec.openslo,
  ];
}

/** Take the counting lock; make the cursor exist. Returns the cursor. */
async function lockCursor(c: PoolClient, settleMs: number): Promise<Date> {
  const { rows } = await c.query<{ cursor: Date }>(
    `SELECT cursor FROM slo_counter_state WHERE id = 1 FOR UPDATE`,
  );
  if (rows[0]) return rows[0].cursor;
  const upper = await safeUpper(c, settleMs);
  await c.query(
    `INSERT INTO slo_counter_state (id, cursor) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`,
    [upper],
  );
  const again = await c.query<{ cursor: Date }>(
    `SELECT cursor FROM slo_counter_state WHERE id = 1 FOR UPDATE`,
  );
  return again.rows[0]!.cursor;
}

/**
 * Newest received_at that no in-flight ingest can still write below: rows
 * take received_at = now() of their transaction, so anything not yet
 * committed is at or after the start of some open transaction. Transactions
 * open over 10 minutes are ignored so a stuck session cannot stall SLOs.
 */
async function safeUpper(c: PoolClient, settleMs: number): Promise<Date> {
  await c.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await c.query<{ upper: Date }>(
    `SELECT LEAST(clock_timestamp() - make_interval(secs => $1::float8 / 1000),
                  COALESCE((SELECT min(xact_start) FROM pg_stat_activity
                             WHERE datname = current_database() AND pid <> pg_backend_pid()
                               AND backend_type = 'client backend' AND xact_start IS NOT NULL
                               AND xact_start > clock_timestamp() - interval '10 minutes'), 'infinity')) AS upper`,
    [settleMs],
  );
  return rows[0]!.upper;
}

function hourKeepMs(r: { window_kind: string; window_ms: number | null }): number {
  return (r.window_kind === 'rolling' ? Number(r.window_ms) : CALENDAR_KEEP_MS) + DAY_MS;
}

const UPSERT_TAIL = (
  table: 'slo_minutes' | 'slo_hours' | 'slo_days',
  key: 'minute' | 'hour' | 'day',
) =>
  `ON CONFLICT (slo_id, ${key}) DO UPDATE SET good = ${table}.good + EXCLUDED.good, total = ${table}.total + EXCLUDED.total`;

/**
 * Durations at or under a threshold in one `span_durations` array (alias sd):
 * a binary search in a sorted one (width_bucket counts the elements <= the
 * threshold), a scan of one stored before migration 0024.
 */
const goodIn = (threshold: string) =>
  `CASE WHEN sd.sorted THEN width_bucket(${threshold}, sd.durations)
        ELSE (SELECT count(*) FROM unnest(sd.durations) AS d(us) WHERE d.us <= ${threshold}) END`;

/**
 * Fill a new SLO's counters from what is stored. Per minute, the raw
 * durations (span_durations: every stored span's, exact) are used when they are complete — when they hold as
 * many spans as that minute's histogram, i.e. raw retention has not dropped
 * any — and the histogram otherwise, estimated at the bucket the threshold
 * cuts. The newest hour always comes from raw spans (received up to the
 * counting cursor), so nothing the next counting step adds is counted twice.
 * Returns the end of the last estimated minute, or null if all is exact.
 */
async function backfill(
  c: PoolClient,
  slo: SloRow,
  cursor: Date,
  realNow: number,
): Promise<Date | null> {
  const from = new Date(realNow - hourKeepMs(slo));
  const histTo = new Date(Math.floor((cursor.getTime() - HOUR_MS) / 60_000) * 60_000);
  const { rows } = await c.query<{ last_estimated: Date | null }>(
    `WITH src AS (
       SELECT s.id FROM slos o JOIN series s ON ${MATCH_SQL} WHERE o.id = $1
     ), hist AS (
       SELECT h.minute, sum(b.c)::int8 AS total,
              sum(CASE WHEN b.i = $6::int THEN b.c
                       WHEN b.i * $5::float8 <= ln($4::float8) THEN b.c
                       WHEN (b.i - 1) * $5::float8 < ln($4::float8)
                         THEN b.c * (ln($4::float8) - (b.i - 1) * $5::float8) / $5::float8
                       ELSE 0 END) AS good
         FROM histograms h JOIN src ON src.id = h.series_id, unnest(h.idx, h.cnt) AS b(i, c)
        WHERE h.minute >= $2 AND h.minute < $3
        GROUP BY h.minute
     ), raw AS (
       SELECT sd.minute, sum(${goodIn('$4::float8')})::int8 AS good,
              sum(cardinality(sd.durations))::int8 AS total
         FROM span_durations sd JOIN src ON src.id = sd.series_id
        WHERE sd.received_at <= $7 AND sd.minute >= $2
        GROUP BY 1
     ), merged AS (
       SELECT coalesce(r.minute, h.minute) AS minute,
              (h.total IS NOT NULL AND coalesce(r.total, 0) < h.total) AS estimated,
              CASE WHEN h.total IS NOT NULL AND coalesce(r.total, 0) < h.total THEN round(h.good)::int8 ELSE r.good END AS good,
              CASE WHEN h.total IS NOT NULL AND coalesce(r.total, 0) < h.total THEN h.total ELSE r.total END AS total
         FROM raw r FULL JOIN hist h ON h.minute = r.minute
     ), m AS (
       INSERT INTO slo_minutes (slo_id, minute, good, total)
       SELECT $1, minute, good, total FROM merged WHERE minute >= $8 ${UPSERT_TAIL('slo_minutes', 'minute')}
     ), hh AS (
       INSERT INTO slo_hours (slo_id, hour, good, total)
       SELECT $1, date_trunc('hour', minute, 'UTC'), sum(good), sum(total) FROM merged GROUP BY 2
       ${UPSERT_TAIL('slo_hours', 'hour')}
     ), d AS (
       INSERT INTO slo_days (slo_id, day, good, total)
       SELECT $1, date_trunc('day', minute, 'UTC'), sum(good), sum(total) FROM merged GROUP BY 2
       ${UPSERT_TAIL('slo_days', 'day')}
     )
     SELECT max(minute) FILTER (WHERE estimated) AS last_estimated FROM merged`,
    [
      slo.id,
      from,
      histTo,
      slo.threshold_us,
      Math.log(GAMMA),
      ZERO_BUCKET,
      cursor,
      new Date(realNow - MINUTE_KEEP_MS),
    ],
  );
  const last = rows[0]?.last_estimated ?? null;
  const exactSince = last ? new Date(last.getTime() + 60_000) : null;
  await c.query(`UPDATE slos SET exact_since = $2 WHERE id = $1`, [slo.id, exactSince]);
  return exactSince;
}

export async function createSlo(
  pool: Pool,
  spec: SloSpec,
  opts: { settleMs?: number; now?: number } = {},
): Promise<SloRow> {
  await checkRegex(pool, spec.name_match);
  return withTransaction(pool, async (c) => {
    // Count what arrived since the last pass first, so the new SLO's backfill is current.
    const cursor = await countWithin(c, opts.settleMs ?? SETTLE_MS, opts.now ?? Date.now());
    const { rows } = await c.query<SloRow>(
      `INSERT INTO slos (name, description, service, op, view, name_match, peer, series_id, threshold_us, objective,
                         window_text, window_kind, window_ms, calendar_unit, time_zone, tiers, min_events, min_bad_events,
                         labels, source, openslo)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21)
       RETURNING ${COLUMNS}`,
      specParams(spec),
    );
    const slo = fixRow(rows[0]!);
    slo.exact_since = await backfill(c, slo, cursor, opts.now ?? Date.now());
    return slo;
  });
}

/** Replace a spec; counters are recounted when what counts as good (selector, threshold) changed. */
export async function updateSlo(
  pool: Pool,
  id: string,
  spec: SloSpec,
  opts: { settleMs?: number; now?: number } = {},
): Promise<SloRow | null> {
  await checkRegex(pool, spec.name_match);
  try {
    return await withTransaction(pool, (c) => replaceSlo(c, id, spec, opts));
  } catch (e) {
    // No such SLO: rolled back, the counting done on the way too (the next pass counts it).
    if (e instanceof NoSuchSlo) return null;
    throw e;
  }
}

class NoSuchSlo extends Error {}

async function replaceSlo(
  c: PoolClient,
  id: string,
  spec: SloSpec,
  opts: { settleMs?: number; now?: number },
): Promise<SloRow> {
  const cursor = await countWithin(c, opts.settleMs ?? SETTLE_MS, opts.now ?? Date.now());
  const before = await c.query<SloRow>(`SELECT ${COLUMNS} FROM slos WHERE id = $1 FOR UPDATE`, [
    id,
  ]);
  if (!before.rows[0]) throw new NoSuchSlo();
  const old = fixRow(before.rows[0]);
  const { rows } = await c.query<SloRow>(
    `UPDATE slos SET name=$1, description=$2, service=$3, op=$4, view=$5, name_match=$6, peer=$7, series_id=$8,
            threshold_us=$9, objective=$10, window_text=$11, window_kind=$12, window_ms=$13, calendar_unit=$14,
            time_zone=$15, tiers=$16, min_events=$17, min_bad_events=$18, labels=$19, source=$20, openslo=$21,
            updated_at = now()
      WHERE id = $22 RETURNING ${COLUMNS}`,
    [...specParams(spec), id],
  );
  const slo = fixRow(rows[0]!);
  const recount =
    old.service !== slo.service ||
    old.op !== slo.op ||
    old.view !== slo.view ||
    old.name_match !== slo.name_match ||
    old.peer !== slo.peer ||
    old.series_id !== slo.series_id ||
    old.threshold_us !== slo.threshold_us ||
    hourKeepMs(slo) > hourKeepMs(old);
  if (recount) {
    await c.query(`DELETE FROM slo_minutes WHERE slo_id = $1`, [id]);
    await c.query(`DELETE FROM slo_hours WHERE slo_id = $1`, [id]);
    await c.query(`DELETE FROM slo_days WHERE slo_id = $1`, [id]);
    slo.exact_since = await backfill(c, slo, cursor, opts.now ?? Date.now());
  }
  return slo;
}

export async function deleteSlo(db: Queryable, id: string): Promise<boolean> {
  if (!/^\d{1,18}$/.test(id)) return false;
  const r = await db.query(`DELETE FROM slos WHERE id = $1`, [id]);
  return (r.rowCount ?? 0) > 0;
}

export interface CountResult {
  from: string;
  to: string;
  /** (slo, minute) counter rows touched. */
  minutes: number;
}

/**
 * Count newly received spans into every SLO's counters, exactly once: the
 * window (cursor, safe upper] is counted and the cursor moved in one
 * transaction, under a row lock so concurrent passes (N servers) serialize.
 * The spans are read as their durations in `span_durations` (one array per
 * series, start minute and ingest transaction, or per fold of several under
 * load (otlp/fold-journal.ts); received_at and received_day those of the
 * transaction that wrote it), not as one `observations` row each: the same spans, the
 * same durations and start minutes, a few rows instead of one per span, and
 * a binary search per array and SLO (goodIn).
 */
export async function countNewObservations(
  pool: Pool,
  opts: { settleMs?: number; now?: number } = {},
): Promise<CountResult | null> {
  return withTransaction(pool, async (c) => {
    const before = await lockCursor(c, opts.settleMs ?? SETTLE_MS);
    return countFrom(c, before, opts.settleMs ?? SETTLE_MS, opts.now ?? Date.now());
  });
}

/** Inside a transaction: take the lock, count up to the safe upper bound, return the new cursor. */
async function countWithin(c: PoolClient, settleMs: number, realNow: number): Promise<Date> {
  const before = await lockCursor(c, settleMs);
  const counted = await countFrom(c, before, settleMs, realNow);
  return counted ? new Date(counted.to) : before;
}

/**
 * The counting statement: spans received in ($1, $2] (received days $3..$4)
 * into every matching SLO's minute (from $5 on), hour and day counters. Each
 * durations array is matched once per SLO and counted by goodIn.
 * Exported for bench/slo/count.ts.
 */
export const COUNT_SQL = `WITH m AS (
       SELECT o.id AS slo_id, s.id AS series_id, o.threshold_us FROM slos o JOIN series s ON ${MATCH_SQL}
     ), agg AS (
       SELECT m.slo_id, sd.minute,
              sum(${goodIn('m.threshold_us')})::int8 AS good,
              sum(cardinality(sd.durations))::int8 AS total
         FROM span_durations sd JOIN m ON m.series_id = sd.series_id
        WHERE sd.received_day BETWEEN $3::date AND $4::date AND sd.received_at > $1 AND sd.received_at <= $2
        GROUP BY 1, 2
     ), mins AS (
       INSERT INTO slo_minutes (slo_id, minute, good, total)
       SELECT slo_id, minute, good, total FROM agg WHERE minute >= $5 ${UPSERT_TAIL('slo_minutes', 'minute')}
       RETURNING 1
     ), hours AS (
       INSERT INTO slo_hours (slo_id, hour, good, total)
       SELECT slo_id, date_trunc('hour', minute, 'UTC'), sum(good), sum(total) FROM agg GROUP BY 1, 2
       ${UPSERT_TAIL('slo_hours', 'hour')}
     ), days AS (
       INSERT INTO slo_days (slo_id, day, good, total)
       SELECT slo_id, date_trunc('day', minute, 'UTC'), sum(good), sum(total) FROM agg GROUP BY 1, 2
       ${UPSERT_TAIL('slo_days', 'day')}
     )
     SELECT count(*)::int AS n FROM mins`;

async function countFrom(
  c: PoolClient,
  cursor: Date,
  settleMs: number,
  realNow: number,
): Promise<CountResult | null> {
  const upper = await safeUpper(c, settleMs);
  if (upper.getTime() <= cursor.getTime()) return null;
  const dayFrom = new Date(Math.floor(cursor.getTime() / DAY_MS) * DAY_MS - DAY_MS)
    .toISOString()
    .slice(0, 10);
  const dayTo = new Date(Math.floor(upper.getTime() / DAY_MS) * DAY_MS + DAY_MS)
    .toISOString()
    .slice(0, 10);
  const res = await c.query(COUNT_SQL, [
    cursor,
    upper,
    dayFrom,
    dayTo,
    new Date(realNow - MINUTE_KEEP_MS),
  ]);
  await c.query(`UPDATE slo_counter_state SET cursor = $1 WHERE id = 1`, [upper]);
  return { from: cursor.toISOString(), to: upper.toISOString(), minutes: res.rows[0].n };
}

/** Drop minute counters past the burn windows and hour/day counters past each SLO's window; at most hourly. */
export async function pruneCounters(pool: Pool, now = Date.now(), force = false): Promise<boolean> {
  const { rows } = await pool.query<{ due: boolean }>(
    `UPDATE slo_counter_state SET retention_at = $1 WHERE id = 1 AND ($2 OR retention_at < $1::timestamptz - interval '1 hour')
     RETURNING true AS due`,
    [new Date(now), force],
  );
  if (!rows.length) return false;
  await pool.query(`DELETE FROM slo_minutes WHERE minute < $1`, [new Date(now - MINUTE_KEEP_MS)]);
  for (const [table, col] of [
    ['slo_hours', 'hour'],
    ['slo_days', 'day'],
  ] as const) {
    await pool.query(
      `DELETE FROM ${table} h USING slos o
        WHERE h.slo_id = o.id
          AND h.${col} < $1::timestamptz - make_interval(secs => (CASE WHEN o.window_kind = 'rolling' THEN o.window_ms ELSE $2 END + $3) / 1000.0)`,
      [new Date(now), CALENDAR_KEEP_MS, 2 * DAY_MS],
    );
  }
  return true;
}

export function notFoundSlo(id: string): HttpError {
  return new HttpError(404, 'not_found', `SLO ${id} does not exist`);
}

/** SLOs whose selector covers one series (the regression alerting policy asks which SLOs it hurts). */
export async function slosCoveringSeries(
  db: Queryable,
  s: { service: string; op: string; view: string; name: string; peer?: string | null },
): Promise<Array<{ id: string; name: string; threshold_ms: number }>> {
  const { rows } = await db.query<{ id: string; name: string; threshold_us: number }>(
    `SELECT o.id::text, o.name, o.threshold_us FROM slos o
      WHERE o.service = $1 AND (o.op IS NULL OR o.op = $2) AND (o.view IS NULL OR o.view = $3)
        AND (o.peer IS NULL OR o.peer = $5) AND (o.name_match IS NULL OR $4 ~ o.name_match)
        AND (o.series_id IS NULL OR o.series_id IN
             (SELECT id FROM series WHERE service = $1 AND op = $2 AND view = $3 AND name = $4 AND peer = $5))
      ORDER BY o.id`,
    [s.service, s.op, s.view, s.name, s.peer ?? ''],
  );
  return rows.map((x) => ({ id: x.id, name: x.name, threshold_ms: x.threshold_us / 1000 }));
}
