/**
 * The `silences` table (owned by alerts/): the rows, the one matching rule
 * (a silence holds an alert when every matcher it gives equals the alert's)
 * and how a silence is shown wherever its alert or regression appears.
 */
import type { Queryable } from '../db/pool.ts';
import type { Silence, SilenceRef } from '@onset/contract';

export interface SilenceRow {
  id: string;
  service: string | null;
  slo_id: string | null;
  op: string | null;
  starts_at: Date;
  ends_at: Date;
  comment: string;
  created_by: string | null;
  created_at: Date;
}

export const SILENCE_COLUMNS = `id::text, service, slo_id::text, op, starts_at, ends_at, comment, created_by, created_at`;

/** What a silence is matched against: an alert, or a regression (which has no SLO). */
export interface SilenceSubject {
  service: string | null;
  slo_id: string | null;
  op: string | null;
}

export const silenceActive = (s: SilenceRow, now: number) =>
  s.starts_at.getTime() <= now && now < s.ends_at.getTime();

/** Every matcher the silence gives equals the subject's (a matcher it leaves out matches anything). */
export function silenceMatches(s: SilenceRow, a: SilenceSubject): boolean {
  return (
    (s.service === null || s.service === a.service) &&
    (s.slo_id === null || s.slo_id === a.slo_id) &&
    (s.op === null || s.op === a.op)
  );
}

/** Silences in force at `now`, the longest-lasting first. */
export async function activeSilences(db: Queryable, now: number): Promise<SilenceRow[]> {
  const { rows } = await db.query<SilenceRow>(
    `SELECT ${SILENCE_COLUMNS} FROM silences WHERE starts_at <= $1 AND ends_at > $1 ORDER BY ends_at DESC, id DESC`,
    [new Date(now)],
  );
  return rows;
}

/** The active silence that holds a subject, if any (the one lasting longest). */
export function silenceFor(active: SilenceRow[], a: SilenceSubject): SilenceRow | null {
  return active.find((s) => silenceMatches(s, a)) ?? null;
}

export async function silencesByIds(
  db: Queryable,
  ids: Array<string | null>,
): Promise<Map<string, SilenceRow>> {
  const want = [...new Set(ids.filter((x): x is string => !!x))];
  if (!want.length) return new Map();
  const { rows } = await db.query<SilenceRow>(
    `SELECT ${SILENCE_COLUMNS} FROM silences WHERE id = ANY($1::bigint[])`,
    [want],
  );
  return new Map(rows.map((s) => [s.id, s]));
}

/** A silence as it is made: the row without what the database assigns. */
export type SilenceInput = Omit<SilenceRow, 'id' | 'created_at'>;

export async function insertSilence(db: Queryable, s: SilenceInput): Promise<SilenceRow> {
  const { rows } = await db.query<SilenceRow>(
    `INSERT INTO silences (service, slo_id, op, starts_at, ends_at, comment, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${SILENCE_COLUMNS}`,
    [s.service, s.slo_id, s.op, s.starts_at, s.ends_at, s.comment, s.created_by],
  );
  return rows[0]!;
}

/** Silences newest first (only those in force now with `active`), at most 1000. */
export async function listSilences(db: Queryable, active: boolean): Promise<SilenceRow[]> {
  const { rows } = await db.query<SilenceRow>(
    `SELECT ${SILENCE_COLUMNS} FROM silences ${active ? 'WHERE starts_at <= now() AND ends_at > now()' : ''} ORDER BY id DESC LIMIT 1000`,
  );
  return rows;
}

/** Ends a silence now (kept in history); null when there is none with that id. */
export async function endSilence(db: Queryable, id: string): Promise<SilenceRow | null> {
  const { rows } = await db.query<SilenceRow>(
    `UPDATE silences SET ends_at = GREATEST(starts_at + interval '1 millisecond', LEAST(ends_at, now()))
      WHERE id = $1 RETURNING ${SILENCE_COLUMNS}`,
    [id],
  );
  return rows[0] ?? null;
}

/** A silence where its alert or regression is shown: until, by, why, still holding or not. */
export function silenceRef(s: SilenceRow, now = Date.now()): SilenceRef {
  return {
    id: s.id,
    starts_at: s.starts_at.toISOString(),
    ends_at: s.ends_at.toISOString(),
    created_by: s.created_by,
    comment: s.comment,
    active: silenceActive(s, now),
  };
}

/** A silence as its own routes answer it. */
export function silenceJson(s: SilenceRow, now = Date.now()): Silence {
  return {
    ...silenceRef(s, now),
    service: s.service,
    slo_id: s.slo_id,
    op: s.op,
    created_at: s.created_at.toISOString(),
  };
}
