/** Regression rows: reading, the API shape (api.md "Regressions"), and the user's status changes. */
import type { Level, Op, Regression, RegressionStatus, View } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import type { Queryable } from '../slos/store.ts';
import type { Cohort, Suspect } from '@onset/core';

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
}

export const REGRESSION_COLUMNS = `id::text, series_id::text, service, op, view, name, peer, host, onset, onset_uncertainty_ms,
  detected_at, updated_at, metric, confidence, before, after, ratio_p50, ratio_p99, suspects, cohort, status,
  acknowledged_at, acknowledged_by, resolved_at, resolved_by, resolution`;

/** What the API shows (the contract's Regression): the row with times as RFC 3339 and an empty peer as null. */
export type RegressionJson = Regression;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

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
    before: r.before,
    after: r.after,
    ratio_p50: r.ratio_p50,
    ratio_p99: r.ratio_p99,
    suspects: r.suspects,
    cohort: r.cohort,
    status: r.status,
    acknowledged_at: iso(r.acknowledged_at),
    acknowledged_by: r.acknowledged_by,
    resolved_at: iso(r.resolved_at),
    resolved_by: r.resolved_by,
    resolution: r.resolution,
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
  if (f.seriesId) add('series_id = ?::bigint', f.seriesId);
  if (f.statuses?.length) add('status = ANY(?::text[])', f.statuses);
  if (f.sinceMs !== undefined) add('onset >= ?', new Date(f.sinceMs));
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
