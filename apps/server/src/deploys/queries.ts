import type { Pool, Queryable } from '../db/pool.ts';
import { HttpError } from '../http/errors.ts';
import type { DeployKind, DeploySource } from '@onset/contract';
import { sameMarker, type MarkerChange, type NewMarker } from './validate.ts';

/** A marker as the API shows it (ids as strings, times as RFC 3339). */
export interface MarkerRow extends MarkerChange {
  /** Inferred markers: the (service, host) changes folded into them. */
  changes?: Array<{ service: string; host: string; at: string }>;
  id: string;
  environment: string | null;
  kind: DeployKind;
  at: string;
  source: DeploySource;
  external_id: string | null;
  created_at: string;
  updated_at: string | null;
}

const MARKER_COLUMNS = `id::text AS id, service, environment, hosts, kind, component, from_version, to_version,
  commit, url, description, at, source, external_id, created_at, updated_at`;

interface DbRow extends Omit<MarkerRow, 'at' | 'created_at' | 'updated_at'> {
  at: Date;
  created_at: Date;
  updated_at: Date | null;
}

function toMarker(r: DbRow): MarkerRow {
  return {
    ...r,
    at: r.at.toISOString(),
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at?.toISOString() ?? null,
  };
}

/**
 * Store a marker. With an external_id, a repeat (a CI retry, even 20 at once)
 * returns the marker stored first: the unique index decides the race and
 * ON CONFLICT DO NOTHING waits for the winner, so every caller sees one id.
 */
export async function insertMarker(
  db: Queryable,
  m: NewMarker,
  source: DeploySource,
): Promise<{ marker: MarkerRow; created: boolean }> {
  const args = [
    m.service,
    m.environment,
    m.hosts,
    m.kind,
    m.component,
    m.from_version,
    m.to_version,
    m.commit,
    m.url,
    m.description,
    m.at,
    source,
    m.external_id,
  ];
  for (let attempt = 0; attempt < 3; attempt++) {
    const ins = await db.query<DbRow>(
      `INSERT INTO deploys (service, environment, hosts, kind, component, from_version, to_version,
                            commit, url, description, at, source, external_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT (external_id) DO NOTHING
       RETURNING ${MARKER_COLUMNS}`,
      args,
    );
    if (ins.rows[0]) return { marker: toMarker(ins.rows[0]), created: true };
    const prior = await db.query<DbRow>(
      `SELECT ${MARKER_COLUMNS} FROM deploys WHERE external_id = $1`,
      [m.external_id],
    );
    const row = prior.rows[0];
    if (!row) continue; // deleted between the two statements: try the insert again
    const existing = toMarker(row);
    const differs = sameMarker(m, { ...existing, at: row.at, external_id: existing.external_id });
    if (differs)
      throw new HttpError(
        409,
        'conflict',
        `external_id "${m.external_id}" already names marker ${existing.id} with a different ${differs}; use a new external_id for a different deploy`,
      );
    return { marker: existing, created: false };
  }
  throw new HttpError(503, 'unavailable', 'the marker was being deleted concurrently; retry', 1);
}

export interface MarkerFilter {
  service?: string;
  environment?: string;
  host?: string;
  kind?: string;
  source?: string;
  fromMs?: number;
  toMs?: number;
  /** Only markers that can explain a change in this series (core's markerTouchesSeries, as SQL). */
  relevantTo?: SeriesScope;
  limit: number;
}

/** What decides which markers touch a series: its service, an edge's callee, the hosts feeding it. */
export interface SeriesScope {
  service: string;
  peer: string | null;
  hosts: string[];
}

/** A series' scope for marker relevance; null when the series does not exist. */
export async function seriesScope(db: Queryable, seriesId: string): Promise<SeriesScope | null> {
  if (!ID.test(seriesId)) return null;
  const { rows } = await db.query<SeriesScope>(
    `SELECT s.service, NULLIF(s.peer, '') AS peer,
            COALESCE(array_agg(DISTINCT r.host ORDER BY r.host) FILTER (WHERE r.host <> ''), '{}') AS hosts
       FROM series s
       LEFT JOIN series_resources sr ON sr.series_id = s.id
       LEFT JOIN resources r ON r.id = sr.resource_id
      WHERE s.id = $1
      GROUP BY s.id`,
    [seriesId],
  );
  return rows[0] ?? null;
}

/**
 * core's markerTouchesSeries as a WHERE condition on deploys (a NULL service or peer matches
 * nothing); the placeholders hold the series' service, peer and hosts. The deploys list and
 * attribution both select markers with it.
 */
export function touchesSeriesSql(service: number, peer: number, hosts: number): string {
  return `(service = $${service} OR service = $${peer} OR hosts && $${hosts}::text[])`;
}

/** Newest first. */
export async function listMarkers(pool: Pool, f: MarkerFilter): Promise<MarkerRow[]> {
  const where: string[] = [];
  const args: unknown[] = [];
  const add = (sql: string, v: unknown) => {
    args.push(v);
    where.push(sql.replaceAll('?', `$${args.length}`));
  };
  if (f.service !== undefined) add('service = ?', f.service);
  if (f.environment !== undefined) add('environment = ?', f.environment);
  if (f.host !== undefined) add('? = ANY (hosts)', f.host);
  if (f.kind !== undefined) add('kind = ?', f.kind);
  if (f.source !== undefined) add('source = ?', f.source);
  if (f.fromMs !== undefined) add('at >= ?', new Date(f.fromMs));
  if (f.toMs !== undefined) add('at <= ?', new Date(f.toMs));
  if (f.relevantTo) {
    args.push(f.relevantTo.service, f.relevantTo.peer, f.relevantTo.hosts);
    const n = args.length;
    where.push(touchesSeriesSql(n - 2, n - 1, n));
  }
  args.push(f.limit);
  const { rows } = await pool.query<DbRow>(
    `SELECT ${MARKER_COLUMNS} FROM deploys ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
      ORDER BY at DESC, id DESC LIMIT $${args.length}`,
    args,
  );
  return withChanges(pool, rows.map(toMarker));
}

/**
 * Inferred markers keep per-service and per-host detail (deploy_inference_values):
 * which (service, host) showed the change, and when. Two services' rollouts folded
 * into one marker stay told apart.
 */
async function withChanges(db: Queryable, markers: MarkerRow[]): Promise<MarkerRow[]> {
  const inferred = markers.filter((m) => m.source === 'inferred');
  if (!inferred.length) return markers;
  const { rows } = await db.query<{ id: string; service: string; host: string; at: Date }>(
    `SELECT deploy_id::text AS id, service, host, first_at AS at FROM deploy_inference_values
      WHERE deploy_id = ANY($1::bigint[]) ORDER BY first_at, service, host`,
    [inferred.map((m) => m.id)],
  );
  for (const m of inferred)
    m.changes = rows
      .filter((x) => x.id === m.id)
      .map((x) => ({ service: x.service, host: x.host, at: x.at.toISOString() }));
  return markers;
}

const ID = /^\d{1,18}$/;

export async function getMarker(pool: Pool, id: string): Promise<MarkerRow | null> {
  if (!ID.test(id)) return null;
  const { rows } = await pool.query<DbRow>(`SELECT ${MARKER_COLUMNS} FROM deploys WHERE id = $1`, [
    id,
  ]);
  return rows[0] ? (await withChanges(pool, [toMarker(rows[0])]))[0]! : null;
}

/** Edit time and/or description (api markers and inferred ones alike); null when absent. */
export async function updateMarker(
  pool: Pool,
  id: string,
  change: { at?: Date; description?: string | null },
): Promise<MarkerRow | null> {
  if (!ID.test(id)) return null;
  const { rows } = await pool.query<DbRow>(
    `UPDATE deploys SET at = COALESCE($2, at),
                        description = CASE WHEN $3 THEN $4 ELSE description END,
                        updated_at = now()
      WHERE id = $1 RETURNING ${MARKER_COLUMNS}`,
    [id, change.at ?? null, change.description !== undefined, change.description ?? null],
  );
  return rows[0] ? toMarker(rows[0]) : null;
}

export async function deleteMarker(pool: Pool, id: string): Promise<boolean> {
  if (!ID.test(id)) return false;
  const res = await pool.query(`DELETE FROM deploys WHERE id = $1`, [id]);
  return (res.rowCount ?? 0) > 0;
}
