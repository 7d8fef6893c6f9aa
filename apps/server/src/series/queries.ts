import { createHash } from 'node:crypto';
import { Histogram } from '@onset/core';
import type { QuantileColumns, QuantilePoint, Series } from '@onset/contract';
import type { Pool, Queryable } from '../db/pool.ts';
import { searchWords, wordsClause } from './search.ts';
import { shownSeries } from '../otlp/registry.ts';
import { SERIES_COLUMNS, withCallsFrom } from './columns.ts';

export interface SeriesFilter {
  service?: string;
  op?: string;
  view?: string;
  host?: string;
  name?: string;
  peer?: string;
  q?: string;
  limit?: number;
  offset?: number;
}

/** A series as the API answers it. */
export type SeriesRow = Series;

/** One page of series in a stable order, with the count of every match (nothing is cut silently). */
export async function listSeries(
  pool: Pool,
  f: SeriesFilter,
): Promise<{ series: SeriesRow[]; total: number; next_offset: number | null }> {
  const where: string[] = [shownSeries()];
  const args: unknown[] = [];
  const add = (sql: string, v: unknown) => {
    args.push(v);
    where.push(sql.replace('?', `$${args.length}`));
  };
  if (f.service) add('s.service = ?', f.service);
  if (f.op) add('s.op = ?', f.op);
  if (f.view) add('s.view = ?', f.view);
  if (f.name) add('s.name = ?', f.name);
  if (f.peer !== undefined) add('s.peer = ?', f.peer);
  if (f.host)
    add(
      'EXISTS (SELECT 1 FROM series_resources sr JOIN resources r ON r.id = sr.resource_id WHERE sr.series_id = s.id AND r.host = ?)',
      f.host,
    );
  if (f.q) where.push(...wordsClause(searchWords(f.q), args));
  const filter = 'WHERE ' + where.join(' AND ');
  const limit = f.limit ?? 1000;
  const offset = f.offset ?? 0;
  const [{ rows }, counted] = await Promise.all([
    pool.query<RegistryRow>(
      `SELECT s.id::text, s.service, s.op, s.view, s.name, NULLIF(s.peer, '') AS peer, s.first_seen, s.last_seen,
              ${SERIES_COLUMNS}
         FROM series s ${filter}
        ORDER BY s.service, s.op, s.view, s.name, s.peer, s.id LIMIT $${args.length + 1} OFFSET $${args.length + 2}`,
      [...args, limit, offset],
    ),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM series s ${filter}`, args),
  ]);
  const total = counted.rows[0]!.n;
  return {
    series: (await withCallsFrom(pool, rows)).map((r) => ({
      ...r,
      first_seen: r.first_seen.toISOString(),
      last_seen: r.last_seen.toISOString(),
    })),
    total,
    next_offset: offset + rows.length < total ? offset + rows.length : null,
  };
}

/** A series row as the registry query returns it, before calls_from is asked. */
type RegistryRow = Omit<
  SeriesRow,
  'calls_from' | 'metrics_not_counted' | 'first_seen' | 'last_seen'
> & {
  first_seen: Date;
  last_seen: Date;
  edge_view: boolean;
};

export async function getSeries(pool: Pool, id: string): Promise<SeriesRow | null> {
  if (!/^\d{1,18}$/.test(id)) return null;
  const { rows } = await pool.query(`SELECT id::text FROM series WHERE id = $1`, [id]);
  if (!rows.length) return null;
  const all = await pool.query<RegistryRow>(
    `SELECT s.id::text, s.service, s.op, s.view, s.name, NULLIF(s.peer, '') AS peer, s.first_seen, s.last_seen,
            ${SERIES_COLUMNS}
       FROM series s WHERE s.id = $1`,
    [id],
  );
  const [r] = await withCallsFrom(pool, all.rows);
  return { ...r!, first_seen: r.first_seen.toISOString(), last_seen: r.last_seen.toISOString() };
}

export interface HistogramQuery {
  seriesId: string;
  fromMs: number;
  toMs: number;
  stepMs: number;
  host?: string;
  /** Restrict to resources whose cohort attribute has this value. */
  attribute?: { key: string; value: string };
}

const HOUR_MS = 3_600_000;

/** One prepared-statement name per SQL variant (at most 8: rollups or not × host × attribute). */
const statementNames = new Map<string, string>();
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (!name) {
    name = `step_histograms_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
    statementNames.set(sql, name);
  }
  return name;
}

/**
 * Merge the histograms of a series into one histogram per step (keys: step
 * start, ms). Steps that are whole hours read the hourly rollups plus the
 * minute rows not yet compacted into them; finer steps read minute rows.
 * Whole-hour steps align the window to step boundaries.
 */
export async function stepHistograms(
  pool: Queryable,
  q: HistogramQuery,
): Promise<Map<number, Histogram>> {
  const hourly = q.stepMs % HOUR_MS === 0;
  const fromMs = hourly ? Math.floor(q.fromMs / q.stepMs) * q.stepMs : q.fromMs;
  const toMs = hourly ? Math.ceil(q.toMs / q.stepMs) * q.stepMs : q.toMs;
  const args: unknown[] = [q.seriesId, new Date(fromMs), new Date(toMs)];
  let filter = '';
  if (q.host) {
    args.push(q.host);
    filter += ` AND resource_id IN (SELECT id FROM resources WHERE host = $${args.length})`;
  }
  if (q.attribute) {
    args.push(q.attribute.key, q.attribute.value);
    filter += ` AND resource_id IN (SELECT id FROM resources WHERE attrs ->> $${args.length - 1} = $${args.length})`;
  }
  const minuteSql = `SELECT extract(epoch FROM minute) * 1000 AS t, idx, cnt FROM histograms
      WHERE series_id = $1 AND minute >= $2 AND minute < $3 ${hourly ? 'AND NOT compacted' : ''} ${filter}`;
  const sql = hourly
    ? `SELECT extract(epoch FROM hour) * 1000 AS t, idx, cnt FROM histograms_hourly
        WHERE series_id = $1 AND hour >= $2 AND hour < $3 ${filter}
       UNION ALL ${minuteSql}`
    : minuteSql;
  // Prepared (named) per variant of the SQL: a 30-day window covers ~60 daily partitions,
  // and planning that union anew took longer than running it.
  const { rows } = await pool.query<{ t: number; idx: number[]; cnt: number[] }>({
    name: statementName(sql),
    text: sql,
    values: args,
  });
  const out = new Map<number, Histogram>();
  for (const r of rows) {
    const key = Math.floor(Number(r.t) / q.stepMs) * q.stepMs;
    let h = out.get(key);
    if (!h) out.set(key, (h = new Histogram()));
    h.addSparse(r);
  }
  return new Map([...out.entries()].sort((a, b) => a[0] - b[0]));
}

export async function quantiles(
  pool: Pool,
  q: HistogramQuery,
  qs: number[],
): Promise<QuantilePoint[]> {
  const steps = await stepHistograms(pool, q);
  const points: QuantilePoint[] = [];
  for (const [t, h] of steps) {
    const values: Record<string, number> = {};
    for (const x of qs) values[String(x)] = round(h.quantile(x) / 1000);
    points.push({ t: new Date(t).toISOString(), count: h.count, q: values });
  }
  return points;
}

/** The same numbers as `quantiles`, one array per field (`layout=columns`): t in epoch ms. */
export async function quantileColumns(
  pool: Pool,
  q: HistogramQuery,
  qs: number[],
): Promise<QuantileColumns> {
  const steps = await stepHistograms(pool, q);
  const out: QuantileColumns = { t: [], count: [], q: {} };
  const cols = qs.map((x) => (out.q[String(x)] = [] as number[]));
  for (const [t, h] of steps) {
    out.t.push(t);
    out.count.push(h.count);
    for (let k = 0; k < qs.length; k++) cols[k]!.push(round(h.quantile(qs[k]!) / 1000));
  }
  return out;
}

function round(ms: number): number {
  return Number(ms.toPrecision(6));
}
