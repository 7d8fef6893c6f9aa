import type { Hint } from '@onset/contract';
/**
 * The `regressions` table, its whole lifecycle in one place: rows opened by
 * the detection pass, their levels and resolution as data arrives, their
 * attribution, the user's status changes, and reading them for the API
 * (api.md "Regressions").
 */
import type {
  Level,
  Op,
  Regression,
  RegressionMember,
  RegressionShape,
  RegressionStatus,
  View,
} from '@onset/contract';
import type { Pool, Queryable } from '../db/pool.ts';
import { headlineLevels, roundMs } from './levels.ts';
import type { Cohort, OnsetOwn, StepChange, Suspect } from '@onset/core';
import { MEMBERS_COLUMN, type MemberRow, type StepFacts } from './members.ts';

export type { Level };

export interface RegressionRow {
  id: string;
  series_id: string;
  service: string;
  op: Op;
  view: View;
  name: string;
  peer: string;
  host: string | null;
  onset: Date;
  onset_uncertainty_ms: number;
  detected_at: Date;
  updated_at: Date;
  metric: 'p50' | 'p99';
  confidence: number;
  before: Level;
  after: Level;
  ratio_p50: number;
  ratio_p99: number;
  suspects: Suspect[];
  cohort: Cohort | null;
  status: RegressionStatus;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
  resolved_at: Date | null;
  resolved_by: string | null;
  resolution: string | null;
  shape: RegressionShape;
  drift_per_hour: number | null;
  /** For a floor: the p99 band before and after the onset (ms). */
  band: { before_ms: [number, number]; after_ms: [number, number] } | null;
  hints: Hint[];
  /** The regression this one was merged into (they turned out to be one incident), else null. */
  merged_into: string | null;
  /** Onset's own noise: 'agent-probe' or 'onset-database' (never grouped with others, never paged), else null. */
  own: OnsetOwn | null;
  /** The incident's series (members.ts), headline first; empty on a row just inserted. */
  members: MemberRow[];
}

const REGRESSION_COLUMNS = `id::text, series_id::text, service, op, view, name, peer, host, onset, onset_uncertainty_ms,
  detected_at, updated_at, metric, confidence, before, after, ratio_p50, ratio_p99, suspects, cohort, status,
  acknowledged_at, acknowledged_by, resolved_at, resolved_by, resolution, shape, drift_per_hour, band, hints,
  merged_into::text, own, ${MEMBERS_COLUMN}`;

/** What the API shows (the contract's Regression): the row with times as RFC 3339 and an empty peer as null. */
export type RegressionJson = Regression;

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const isoMs = (ms: number | string | null) =>
  ms === null ? null : new Date(Number(ms)).toISOString();

function memberJson(m: MemberRow): RegressionMember {
  return {
    series_id: m.series_id,
    service: m.service,
    op: m.op,
    view: m.view,
    name: m.name,
    peer: m.peer === '' ? null : m.peer,
    headline: m.headline,
    onset: isoMs(m.onset_ms)!,
    onset_uncertainty_ms: m.onset_uncertainty_ms,
    detected_at: isoMs(m.detected_at_ms)!,
    metric: m.metric,
    confidence: m.confidence,
    before: m.before,
    after: m.after,
    ratio_p50: m.ratio_p50,
    ratio_p99: m.ratio_p99,
    hosts: m.hosts,
    recovered_at: isoMs(m.recovered_at_ms),
  };
}

export function regressionJson(r: RegressionRow): RegressionJson {
  return {
    id: r.id,
    series_id: r.series_id,
    service: r.service,
    op: r.op,
    view: r.view,
    name: r.name,
    peer: r.peer === '' ? null : r.peer,
    host: r.host,
    onset: r.onset.toISOString(),
    onset_uncertainty_ms: r.onset_uncertainty_ms,
    detected_at: r.detected_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    metric: r.metric,
    confidence: r.confidence,
    ...headlineLevels(r),
    suspects: r.suspects,
    cohort: r.cohort,
    hints: r.hints ?? [],
    status: r.status,
    acknowledged_at: iso(r.acknowledged_at),
    acknowledged_by: r.acknowledged_by,
    resolved_at: iso(r.resolved_at),
    resolved_by: r.resolved_by,
    resolution: r.resolution,
    merged_into: r.merged_into ?? null,
    own: r.own ?? null,
    shape: r.shape,
    drift_per_hour: r.drift_per_hour,
    band: r.band ?? null,
    members: (r.members ?? []).map(memberJson),
  };
}

export interface RegressionFilter {
  service?: string;
  op?: string;
  view?: string;
  name?: string;
  peer?: string;
  seriesId?: string;
  statuses?: RegressionStatus[];
  sinceMs?: number;
  /** Also those merged into another (one incident found apart); default: each incident once. */
  merged?: boolean;
  limit: number;
}

export async function listRegressions(pool: Pool, f: RegressionFilter): Promise<RegressionRow[]> {
  const where: string[] = [];
  const args: unknown[] = [];
  const add = (sql: string, v: unknown) => {
    args.push(v);
    where.push(sql.replaceAll('?', `$${args.length}`));
  };
  if (f.service) add('service = ?', f.service);
  if (f.op) add('op = ?', f.op);
  if (f.view) add('view = ?', f.view);
  if (f.name) add('name = ?', f.name);
  if (f.peer !== undefined) add('peer = ?', f.peer);
  if (f.seriesId)
    add(
      'EXISTS (SELECT 1 FROM regression_members m WHERE m.regression_id = regressions.id AND m.series_id = ?::bigint)',
      f.seriesId,
    );
  if (f.statuses?.length) add('status = ANY(?::text[])', f.statuses);
  if (f.sinceMs !== undefined) add('onset >= ?', new Date(f.sinceMs));
  if (!f.merged) where.push('merged_into IS NULL');
  args.push(f.limit);
  const { rows } = await pool.query<RegressionRow>(
    `SELECT ${REGRESSION_COLUMNS} FROM regressions ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
      ORDER BY onset DESC, id DESC LIMIT $${args.length}`,
    args,
  );
  return rows;
}

export async function getRegression(
  db: Queryable,
  id: string,
  forUpdate = false,
): Promise<RegressionRow | null> {
  if (!/^\d{1,18}$/.test(id)) return null;
  const { rows } = await db.query<RegressionRow>(
    `SELECT ${REGRESSION_COLUMNS} FROM regressions WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0] ?? null;
}

// ---- the detection pass -------------------------------------------------

/** A regression opened on its first (headline) step; `own` when it is Onset's own noise. */
export type NewRegression = StepFacts & { own?: OnsetOwn | null };

export async function insertRegression(db: Queryable, r: NewRegression): Promise<RegressionRow> {
  const ch = r.change;
  const { rows } = await db.query<RegressionRow>(
    `INSERT INTO regressions (series_id, service, op, view, name, peer, onset, onset_uncertainty_ms, detected_at, updated_at,
                              metric, confidence, before, after, ratio_p50, ratio_p99, change, after_through, shape, drift_per_hour, band, own)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
     RETURNING ${REGRESSION_COLUMNS}`,
    [
      r.seriesId,
      r.labels.service,
      r.labels.op,
      r.labels.view,
      r.labels.name,
      r.labels.peer,
      new Date(ch.t),
      r.uncertaintyMs,
      new Date(r.detectedMs),
      ch.metric,
      r.confidence,
      JSON.stringify(r.before),
      JSON.stringify(r.after),
      r.ratioP50,
      r.ratioP99,
      JSON.stringify(ch),
      new Date(r.afterThroughMs),
      // A sustained ramp is opened as one drift with its rate, a tail collapse as a floor with its
      // band; everything else opens as a step.
      ch.shape === 'drift' || ch.shape === 'floor' ? ch.shape : 'step',
      ch.shape === 'drift' ? (ch.driftPerHour ?? null) : null,
      ch.shape === 'floor' && ch.band ? JSON.stringify(bandMs(ch.band)) : null,
      r.own ?? null,
    ],
  );
  return rows[0]!;
}

/**
 * Close a regression merged into another (they turned out to be one incident;
 * its members are the survivor's now): resolved by Onset, `merged_into` the
 * survivor, its resolution saying so.
 */
export async function markMerged(
  db: Queryable,
  id: string,
  intoId: string,
  nowMs: number,
): Promise<void> {
  await db.query(
    `UPDATE regressions SET status = 'resolved', resolved_at = $3, resolved_by = 'onset', merged_into = $2::bigint,
            resolution = $4, updated_at = $3
      WHERE id = $1`,
    [id, intoId, new Date(nowMs), `merged into regression ${intoId}: the same incident`],
  );
}

/** A floor's band as the API shows it: µs (the series' unit) to ms. */
function bandMs(b: NonNullable<StepChange['band']>): NonNullable<RegressionRow['band']> {
  const ms = ([lo, hi]: [number, number]): [number, number] => [
    roundMs(lo / 1000),
    roundMs(hi / 1000),
  ];
  return { before_ms: ms(b.before), after_ms: ms(b.after) };
}

/** The headline member's new after level and ratios, mirrored on the regression row. */
export async function updateHeadlineLevels(
  db: Queryable,
  id: string,
  u: { after: Level; ratioP50: number; ratioP99: number; afterThroughMs: number; nowMs: number },
): Promise<void> {
  await db.query(
    `UPDATE regressions SET after = $2, ratio_p50 = $3, ratio_p99 = $4, after_through = GREATEST(after_through, $5),
            updated_at = $6
      WHERE id = $1 AND status <> 'resolved'`,
    [
      id,
      JSON.stringify(u.after),
      u.ratioP50,
      u.ratioP99,
      new Date(u.afterThroughMs),
      new Date(u.nowMs),
    ],
  );
}

/** A regression Onset closed as a burst (core's burstVerdict): labelled transient. */
/** The hints shown with a regression (evidence/ computes them from the raw spans). */
export async function saveHints(db: Queryable, id: string, hints: Hint[]): Promise<void> {
  await db.query(`UPDATE regressions SET hints = $2::jsonb WHERE id = $1::bigint`, [
    id,
    JSON.stringify(hints),
  ]);
}

export async function markTransient(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE regressions SET shape = 'transient' WHERE id = $1`, [id]);
}

/** One regression by id (string from the database), or null; with `unresolved`, only if not resolved. */
export async function regressionById(
  db: Queryable,
  id: string,
  opts: { unresolved?: boolean } = {},
): Promise<RegressionRow | null> {
  const { rows } = await db.query<RegressionRow>(
    `SELECT ${REGRESSION_COLUMNS} FROM regressions WHERE id = $1${opts.unresolved ? ` AND status <> 'resolved'` : ''}`,
    [id],
  );
  return rows[0] ?? null;
}

/**
 * Unresolved regressions still young — detected after `detectedAfterMs` (wall
 * clock), or with an onset after `onsetAfterMs` (data time: a replay or a
 * catch-up moves through hours of data in minutes) — that were not
 * attributed since `attributedBeforeMs`.
 */
export async function dueForReattribution(
  db: Queryable,
  young: { detectedAfterMs: number; onsetAfterMs: number },
  attributedBeforeMs: number,
  /** Only those whose headline series is in these shards (a server's own, shards.ts). */
  shards: { count: number; shards: readonly number[] } | null = null,
): Promise<RegressionRow[]> {
  const { rows } = await db.query<RegressionRow>(
    `SELECT ${REGRESSION_COLUMNS} FROM regressions
      WHERE status <> 'resolved' AND (detected_at > $1 OR onset > $2)
        AND (attributed_at IS NULL OR attributed_at < $3)
        ${shards ? 'AND series_id % $4 = ANY($5::int[])' : ''}`,
    [
      new Date(young.detectedAfterMs),
      new Date(young.onsetAfterMs),
      new Date(attributedBeforeMs),
      ...(shards ? [shards.count, shards.shards] : []),
    ],
  );
  return rows;
}

export async function writeAttribution(
  db: Queryable,
  id: string,
  a: { suspects: Suspect[]; cohort: Cohort | null; host: string | null; nowMs: number },
): Promise<RegressionRow | null> {
  const { rows } = await db.query<RegressionRow>(
    `UPDATE regressions SET suspects = $2, cohort = $3, host = $4, attributed_at = $5 WHERE id = $1 RETURNING ${REGRESSION_COLUMNS}`,
    [
      id,
      JSON.stringify(a.suspects),
      a.cohort ? JSON.stringify(a.cohort) : null,
      a.host,
      new Date(a.nowMs),
    ],
  );
  return rows[0] ?? null;
}

// ---- the user's status changes -------------------------------------------

export async function markAcknowledged(
  db: Queryable,
  id: string,
  by: string | null,
): Promise<RegressionRow> {
  const { rows } = await db.query<RegressionRow>(
    `UPDATE regressions SET status = 'acknowledged', acknowledged_at = coalesce(acknowledged_at, now()),
            acknowledged_by = coalesce($2, acknowledged_by), updated_at = now()
      WHERE id = $1 RETURNING ${REGRESSION_COLUMNS}`,
    [id, by],
  );
  return rows[0]!;
}

export async function markResolved(
  db: Queryable,
  id: string,
  by: string,
  resolution: string,
): Promise<RegressionRow> {
  const { rows } = await db.query<RegressionRow>(
    `UPDATE regressions SET status = 'resolved', resolved_at = now(), resolved_by = $2, resolution = $3, updated_at = now()
      WHERE id = $1 RETURNING ${REGRESSION_COLUMNS}`,
    [id, by, resolution],
  );
  return rows[0]!;
}

export async function markOpen(db: Queryable, id: string): Promise<RegressionRow> {
  const { rows } = await db.query<RegressionRow>(
    `UPDATE regressions SET status = 'open', resolved_at = NULL, resolved_by = NULL, resolution = NULL,
            acknowledged_at = NULL, acknowledged_by = NULL, updated_at = now()
      WHERE id = $1 RETURNING ${REGRESSION_COLUMNS}`,
    [id],
  );
  return rows[0]!;
}

/** A regression that names a deploy its top suspect (a deploy verdict's `regressions`). */
export interface RegressionNamingDeploy {
  id: string;
  series_id: string;
  service: string;
  view: string;
  name: string;
  peer: string | null;
  detected_at: Date;
  reason: string;
}

/**
 * Open or acknowledged regressions whose top suspect is this deploy (any marker of
 * its rollout): each fails the deploy's verdict (docs/verdicts.md).
 */
export async function regressionsNamingDeploy(
  db: Queryable,
  deployId: string,
): Promise<RegressionNamingDeploy[]> {
  const { rows } = await db.query<RegressionNamingDeploy>(
    `SELECT id::text, series_id::text, service, view, name, NULLIF(peer, '') AS peer, detected_at,
            COALESCE(suspects -> 0 ->> 'reason', '') AS reason
       FROM regressions
      WHERE status IN ('open', 'acknowledged')
        AND (suspects -> 0 ->> 'deploy_id' = $1 OR (suspects -> 0 -> 'deploy_ids') ? $1)
      ORDER BY detected_at, id`,
    [deployId],
  );
  return rows;
}
