/**
 * Every query on `regression_members` (migrations/0016): the series on which
 * one regression (one incident) was found, each with its own evidence. The
 * regression row mirrors its headline member; store.ts reads members with it.
 */
import type { Queryable } from '../db/pool.ts';
import type { Level, Op, View } from '@onset/contract';
import {
  headlineIndex,
  rolloutOf,
  type OnsetOwn,
  type RolloutRef,
  type StepChange,
  type Suspect,
} from '@onset/core';

/** A member as the regression row's `members` column carries it (times as epoch ms). */
export interface MemberRow {
  series_id: string;
  service: string;
  op: Op;
  view: View;
  name: string;
  peer: string;
  headline: boolean;
  onset_ms: number;
  onset_uncertainty_ms: number;
  detected_at_ms: number;
  metric: 'p50' | 'p99';
  confidence: number;
  before: Level;
  after: Level;
  ratio_p50: number;
  ratio_p99: number;
  hosts: string[];
  recovered_at_ms: number | null;
}

const ms = (col: string) => `(extract(epoch FROM ${col}) * 1000)::bigint`;

/** SQL for a regression's members as one jsonb array, headline first (for `regressions.id`). */
export const MEMBERS_COLUMN = `(SELECT coalesce(jsonb_agg(jsonb_build_object(
    'series_id', m.series_id::text, 'service', m.service, 'op', m.op, 'view', m.view, 'name', m.name,
    'peer', m.peer, 'headline', m.headline, 'onset_ms', ${ms('m.onset')},
    'onset_uncertainty_ms', m.onset_uncertainty_ms, 'detected_at_ms', ${ms('m.detected_at')},
    'metric', m.metric, 'confidence', m.confidence, 'before', m.before, 'after', m.after,
    'ratio_p50', m.ratio_p50, 'ratio_p99', m.ratio_p99, 'hosts', to_jsonb(m.hosts),
    'recovered_at_ms', ${ms('m.recovered_at')})
    ORDER BY m.headline DESC, m.onset, m.series_id), '[]'::jsonb)
  FROM regression_members m WHERE m.regression_id = regressions.id) AS members`;

/** Onsets (and their uncertainty, ms) of every step already recorded on these series, any status. */
export async function knownOnsets(
  db: Queryable,
  seriesIds: number[],
): Promise<Array<{ series_id: number; onset: Date; unc: number }>> {
  const { rows } = await db.query<{ series_id: string; onset: Date; unc: number }>(
    `SELECT series_id, onset, onset_uncertainty_ms AS unc FROM regression_members
      WHERE series_id = ANY($1::bigint[])`,
    [seriesIds],
  );
  return rows.map((r) => ({ ...r, series_id: Number(r.series_id) }));
}

/** A member as grouping sees it: labels, onset, ratios, and its regression. */
export interface NearMember {
  regression_id: string;
  /** Open or acknowledged (else resolved by a person). */
  open: boolean;
  seriesId: string;
  headline: boolean;
  service: string;
  op: string;
  view: string;
  name: string;
  peer: string;
  onsetMs: number;
  uncertaintyMs: number;
  ratio_p50: number;
  ratio_p99: number;
  /** The regression's top suspect's rollout (a later wave of it grows the regression). */
  rollout: RolloutRef | null;
  /** The regression is Onset's own noise (the agent's probes, Onset's own database). */
  own: OnsetOwn | null;
}

/**
 * Members with an onset in [fromMs, toMs] of the regressions a new step may
 * join: open or acknowledged ones, and ones a person resolved (they know of
 * the incident). A regression Onset resolved because latency came back is not
 * joined: a step still there would be a new episode, which must page.
 */
export async function membersNear(
  db: Queryable,
  fromMs: number,
  toMs: number,
): Promise<NearMember[]> {
  const { rows } = await db.query<
    Omit<NearMember, 'onsetMs' | 'rollout'> & { onset: Date; top: Suspect | null }
  >(
    `SELECT m.regression_id::text, r.status <> 'resolved' AS open, m.series_id::text AS "seriesId", m.headline, m.service, m.op, m.view, m.name, m.peer, m.onset,
            m.onset_uncertainty_ms AS "uncertaintyMs", m.ratio_p50, m.ratio_p99, r.suspects -> 0 AS top, r.own
       FROM regression_members m JOIN regressions r ON r.id = m.regression_id
      WHERE m.onset BETWEEN $1 AND $2 AND (r.status <> 'resolved' OR r.resolved_by IS DISTINCT FROM 'onset')
      ORDER BY m.onset, m.regression_id`,
    [new Date(fromMs), new Date(toMs)],
  );
  return rows.map(({ onset, top, ...r }) => ({
    ...r,
    onsetMs: onset.getTime(),
    rollout: rolloutOf(top ?? undefined),
  }));
}

/** What one confirmed step says about its series: the facts a regression and each member store. */
export interface StepFacts {
  seriesId: number;
  labels: { service: string; op: string; view: string; name: string; peer: string };
  change: StepChange;
  uncertaintyMs: number;
  detectedMs: number;
  /** 1 - p of the confirming test, rounded. */
  confidence: number;
  before: Level;
  after: Level;
  ratioP50: number;
  ratioP99: number;
  /** Events of the after level counted up to here (epoch ms). */
  afterThroughMs: number;
}

export interface NewMember extends StepFacts {
  regressionId: string;
  hosts: string[];
  headline: boolean;
}

export async function insertMember(db: Queryable, m: NewMember): Promise<void> {
  await db.query(
    `INSERT INTO regression_members (regression_id, series_id, service, op, view, name, peer, onset,
            onset_uncertainty_ms, detected_at, metric, confidence, before, after, ratio_p50, ratio_p99,
            change, after_through, hosts, headline)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
     ON CONFLICT DO NOTHING`,
    [
      m.regressionId,
      m.seriesId,
      m.labels.service,
      m.labels.op,
      m.labels.view,
      m.labels.name,
      m.labels.peer,
      new Date(m.change.t),
      m.uncertaintyMs,
      new Date(m.detectedMs),
      m.change.metric,
      m.confidence,
      JSON.stringify(m.before),
      JSON.stringify(m.after),
      m.ratioP50,
      m.ratioP99,
      JSON.stringify(m.change),
      new Date(m.afterThroughMs),
      m.hosts,
      m.headline,
    ],
  );
}

/**
 * Make one member the headline and copy its evidence into the regression row
 * (the API's existing fields). Suspects, cohort, host and hints are the
 * attribution's: the caller recomputes them for the new headline series.
 */
export async function makeHeadline(
  db: Queryable,
  regressionId: string,
  seriesId: number,
  onset: Date,
  nowMs: number,
): Promise<void> {
  await db.query(
    `UPDATE regression_members SET headline = false WHERE regression_id = $1 AND headline`,
    [regressionId],
  );
  await db.query(
    `UPDATE regression_members SET headline = true WHERE regression_id = $1 AND series_id = $2 AND onset = $3`,
    [regressionId, seriesId, onset],
  );
  await db.query(
    `UPDATE regressions r
        SET series_id = m.series_id, service = m.service, op = m.op, view = m.view, name = m.name, peer = m.peer,
            onset = m.onset, onset_uncertainty_ms = m.onset_uncertainty_ms, metric = m.metric,
            confidence = m.confidence, before = m.before, after = m.after, ratio_p50 = m.ratio_p50,
            ratio_p99 = m.ratio_p99, change = m.change, after_through = m.after_through, updated_at = $2
       FROM regression_members m
      WHERE r.id = $1 AND m.regression_id = r.id AND m.headline`,
    [regressionId, new Date(nowMs)],
  );
}

/** A member of an open or acknowledged regression, with what updating it needs. */
export interface UnresolvedMember {
  regression_id: string;
  series_id: string;
  onset: Date;
  onset_uncertainty_ms: number;
  metric: 'p50' | 'p99';
  headline: boolean;
  before: Level;
  after: Level;
  change: StepChange;
  after_through: Date;
}

/** Members on these series of regressions that are not resolved, oldest onset first. */
export async function unresolvedMembersOf(
  db: Queryable,
  seriesIds: number[],
): Promise<UnresolvedMember[]> {
  const { rows } = await db.query<UnresolvedMember>(
    `SELECT m.regression_id::text, m.series_id::text, m.onset, m.onset_uncertainty_ms, m.metric, m.headline,
            m.before, m.after, m.change, m.after_through
       FROM regression_members m JOIN regressions r ON r.id = m.regression_id
      WHERE m.series_id = ANY($1::bigint[]) AND r.status <> 'resolved'
      ORDER BY m.onset, m.regression_id`,
    [seriesIds],
  );
  return rows;
}

/**
 * Move every member of `fromId` to `intoId` (a merge: they turned out to be
 * one incident); none of them is the headline there (the caller picks it).
 */
export async function moveMembers(db: Queryable, fromId: string, intoId: string): Promise<void> {
  await db.query(
    `UPDATE regression_members SET regression_id = $2, headline = false WHERE regression_id = $1`,
    [fromId, intoId],
  );
}

/** The member that shows a regression's step best (core's headlineIndex): series and onset. */
export async function strongestMember(
  db: Queryable,
  regressionId: string,
): Promise<{ series_id: string; onset: Date; headline: boolean } | null> {
  const { rows } = await db.query<{
    series_id: string;
    onset: Date;
    headline: boolean;
    ratio_p50: number;
    ratio_p99: number;
  }>(
    `SELECT series_id::text, onset, headline, ratio_p50, ratio_p99 FROM regression_members
      WHERE regression_id = $1 ORDER BY headline DESC, onset, series_id`,
    [regressionId],
  );
  const i = headlineIndex(rows);
  return i < 0 ? null : rows[i]!;
}

/** A member's new after level and ratios, and whether its latency is back (recovered_at, null if not). */
export async function updateMember(
  db: Queryable,
  m: Pick<UnresolvedMember, 'regression_id' | 'series_id' | 'onset'>,
  u: {
    after: Level;
    ratioP50: number;
    ratioP99: number;
    afterThroughMs: number;
    recoveredAtMs: number | null;
    recovery: string | null;
  },
): Promise<void> {
  await db.query(
    `UPDATE regression_members SET after = $4, ratio_p50 = $5, ratio_p99 = $6,
            after_through = GREATEST(after_through, $7), recovered_at = $8, recovery = $9
      WHERE regression_id = $1 AND series_id = $2 AND onset = $3`,
    [
      m.regression_id,
      m.series_id,
      m.onset,
      JSON.stringify(u.after),
      u.ratioP50,
      u.ratioP99,
      new Date(u.afterThroughMs),
      u.recoveredAtMs === null ? null : new Date(u.recoveredAtMs),
      u.recovery,
    ],
  );
}

/**
 * Resolve a regression (by Onset) when every member is back at its before
 * level: resolved at the last member's recovery, with the headline's words.
 * True when it resolved now.
 */
export async function resolveIfAllRecovered(
  db: Queryable,
  regressionId: string,
  nowMs: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE regressions r
        SET status = 'resolved', resolved_at = m.last, resolved_by = 'onset', resolution = m.recovery, updated_at = $2
       FROM (SELECT max(recovered_at) AS last, bool_and(recovered_at IS NOT NULL) AS back,
                    (array_agg(recovery ORDER BY headline DESC))[1] AS recovery
               FROM regression_members WHERE regression_id = $1) m
      WHERE r.id = $1 AND r.status <> 'resolved' AND m.back`,
    [regressionId, new Date(nowMs)],
  );
  return (rowCount ?? 0) > 0;
}

/** Hosts that reported a series in [fromMs, toMs), sorted (at most `limit`). */
export async function hostsReporting(
  db: Queryable,
  seriesId: number,
  fromMs: number,
  toMs: number,
  limit = 200,
): Promise<string[]> {
  const { rows } = await db.query<{ host: string }>(
    `SELECT DISTINCT res.host FROM histograms h JOIN resources res ON res.id = h.resource_id
      WHERE h.series_id = $1 AND h.minute >= $2 AND h.minute < $3 AND res.host <> ''
      ORDER BY 1 LIMIT $4`,
    [seriesId, new Date(fromMs), new Date(toMs), limit],
  );
  return rows.map((r) => r.host);
}
