/**
 * One series split into groups of the resources (hosts) that feed it: by
 * host, by a resource attribute's value (service.version, os.version, …), or
 * by a given list of hosts per group (a regression's cohort sides). Each
 * group's histograms are merged per step exactly as the quantiles read merges
 * the whole series' (queries.ts), so a group's line is the quantiles read
 * with that group's resources only.
 */
import { createHash } from 'node:crypto';
import { Histogram } from '@onset/core';
import type { QuantileColumns } from '@onset/contract';
import type { Pool } from '../db/pool.ts';

const HOUR_MS = 3_600_000;

export interface GroupWindow {
  seriesId: string;
  fromMs: number;
  toMs: number;
  stepMs: number;
}

export interface ResourceFacts {
  host: string;
  attrs: Record<string, unknown>;
}

/** The group a resource's calls go to; undefined leaves them out. */
export type GroupOf<K> = (r: ResourceFacts) => K | undefined;

export interface StepGroup<K> {
  key: K;
  hosts: Set<string>;
  count: number;
  steps: Map<number, Histogram>;
}

const statementNames = new Map<string, string>();
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (!name) {
    name = `group_histograms_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
    statementNames.set(sql, name);
  }
  return name;
}

/**
 * The series' histograms per group and step. Whole-hour steps read the hourly
 * rollups plus the minute rows not yet compacted into them and align the
 * window to the step, as stepHistograms does.
 */
export async function groupedStepHistograms<K>(
  pool: Pool,
  w: GroupWindow,
  groupOf: GroupOf<K>,
): Promise<Map<K, StepGroup<K>>> {
  const hourly = w.stepMs % HOUR_MS === 0;
  const fromMs = hourly ? Math.floor(w.fromMs / w.stepMs) * w.stepMs : w.fromMs;
  const toMs = hourly ? Math.ceil(w.toMs / w.stepMs) * w.stepMs : w.toMs;
  const minuteSql = `SELECT extract(epoch FROM minute) * 1000 AS t, resource_id::text AS rid, idx, cnt FROM histograms
      WHERE series_id = $1 AND minute >= $2 AND minute < $3 ${hourly ? 'AND NOT compacted' : ''}`;
  const sql = hourly
    ? `SELECT extract(epoch FROM hour) * 1000 AS t, resource_id::text AS rid, idx, cnt FROM histograms_hourly
        WHERE series_id = $1 AND hour >= $2 AND hour < $3
       UNION ALL ${minuteSql}`
    : minuteSql;
  const { rows } = await pool.query<{ t: number; rid: string; idx: number[]; cnt: number[] }>({
    name: statementName(sql),
    text: sql,
    values: [w.seriesId, new Date(fromMs), new Date(toMs)],
  });
  const ids = [...new Set(rows.map((r) => r.rid))];
  // Asked apart (resources is a reference table on Citus, histograms distributed).
  const { rows: res } = ids.length
    ? await pool.query<{ id: string; host: string; attrs: Record<string, unknown> }>(
        `SELECT id::text, host, attrs FROM resources WHERE id = ANY ($1::bigint[])`,
        [ids],
      )
    : { rows: [] };
  const resources = new Map(res.map((r) => [r.id, r]));
  const keyOf = new Map<string, K | undefined>();
  const out = new Map<K, StepGroup<K>>();
  for (const r of rows) {
    let key: K | undefined;
    if (keyOf.has(r.rid)) key = keyOf.get(r.rid);
    else {
      const facts = resources.get(r.rid);
      key = facts ? groupOf(facts) : undefined;
      keyOf.set(r.rid, key);
    }
    if (key === undefined) continue;
    let g = out.get(key);
    if (!g) out.set(key, (g = { key, hosts: new Set(), count: 0, steps: new Map() }));
    const host = resources.get(r.rid)!.host;
    if (host) g.hosts.add(host);
    const t = Math.floor(Number(r.t) / w.stepMs) * w.stepMs;
    let h = g.steps.get(t);
    if (!h) g.steps.set(t, (h = new Histogram()));
    h.addSparse(r);
  }
  for (const g of out.values()) {
    g.steps = new Map([...g.steps.entries()].sort((a, b) => a[0] - b[0]));
    g.count = [...g.steps.values()].reduce((n, h) => n + h.count, 0);
  }
  return out;
}

/** One group's steps as quantile columns (the quantiles read's `layout=columns`). */
export function groupColumns(steps: Map<number, Histogram>, qs: number[]): QuantileColumns {
  const out: QuantileColumns = { t: [], count: [], q: {} };
  const cols = qs.map((x) => (out.q[String(x)] = [] as number[]));
  for (const [t, h] of steps) {
    out.t.push(t);
    out.count.push(h.count);
    for (let k = 0; k < qs.length; k++)
      cols[k]!.push(Number((h.quantile(qs[k]!) / 1000).toPrecision(6)));
  }
  return out;
}

/** The group of a resource by `by`: its host, or the value of that resource attribute (null: unset). */
export function groupBy(by: string): GroupOf<string | null> {
  if (by === 'host' || by === 'host.name') return (r) => r.host || null;
  return (r) => {
    const v = r.attrs[by];
    return v === undefined || v === null ? null : String(v);
  };
}

/** `groupOf` over one host's resources only (the other hosts' calls are left out). */
export function onHost<K>(groupOf: GroupOf<K>, host: string | undefined): GroupOf<K> {
  return host === undefined ? groupOf : (r) => (r.host === host ? groupOf(r) : undefined);
}

/** The window's quantile columns of each group, most calls first (of one host's calls with `host`). */
export async function seriesGroups(
  pool: Pool,
  w: GroupWindow,
  by: string,
  qs: number[],
  limit: number,
  host?: string,
): Promise<{
  groups: Array<{ value: string | null; hosts: string[]; count: number; columns: QuantileColumns }>;
  total: number;
}> {
  const all = [
    ...(await groupedStepHistograms(pool, w, onHost(groupBy(by), host))).values(),
  ].filter((g) => g.count > 0);
  all.sort(
    (a, b) =>
      b.count - a.count || String(a.key ?? '\uffff').localeCompare(String(b.key ?? '\uffff')),
  );
  return {
    groups: all.slice(0, limit).map((g) => ({
      value: g.key,
      hosts: [...g.hosts].sort(),
      count: g.count,
      columns: groupColumns(g.steps, qs),
    })),
    total: all.length,
  };
}
