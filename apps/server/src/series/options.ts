/**
 * The Explorer's pickers, answered over every series (not a page of them): for a partial
 * choice of service, op, view, name and peer, the distinct values of each label under the
 * choices before it, and the choice itself with any later label no series has dropped.
 * The registry's unique index (service, op, view, name, peer) serves each level.
 */
import type { SeriesOptions, SeriesOptionsQuery } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { shownSeries } from '../otlp/registry.ts';

/** Values a picker lists at most; `total` says how many there are. */
export const FACET_LIMIT = 1000;

const LEVELS = [
  { field: 'service', facet: 'services' },
  { field: 'op', facet: 'ops' },
  { field: 'view', facet: 'views' },
  { field: 'name', facet: 'names' },
  { field: 'peer', facet: 'peers' },
] as const;

type Field = (typeof LEVELS)[number]['field'];

export async function seriesOptions(pool: Pool, q: SeriesOptionsQuery): Promise<SeriesOptions> {
  const kept: Partial<Record<Field, string>> = {};
  const out: Partial<SeriesOptions> = {};
  // Level by level: each facet (and whether the choice at it exists) under the choices kept before it.
  for (const { field, facet } of LEVELS) {
    const args: unknown[] = [];
    const where = [
      shownSeries('series'),
      ...Object.entries(kept).map(([k, v]) => {
        args.push(v);
        return `${k} = $${args.length}`;
      }),
    ];
    // An empty peer is "any peer", as in the Explorer's URL; other empty choices are no choice.
    const chosen = q[field] || undefined;
    args.push(chosen ?? null, FACET_LIMIT);
    const { rows } = await pool.query<{ total: number; vals: string[]; found: boolean }>(
      `WITH d AS (SELECT DISTINCT ${field} AS v FROM series WHERE ${where.join(' AND ')})
       SELECT (SELECT count(*)::int FROM d) AS total,
              COALESCE((SELECT array_agg(v ORDER BY v) FROM (SELECT v FROM d ORDER BY v LIMIT $${args.length}) x), '{}') AS vals,
              EXISTS (SELECT 1 FROM d WHERE v = $${args.length - 1}) AS found`,
      args,
    );
    const r = rows[0]!;
    out[facet] = { values: r.vals, total: r.total };
    if (chosen !== undefined && r.found) kept[field] = chosen;
  }
  const args: unknown[] = [];
  const where = [
    shownSeries('series'),
    ...Object.entries(kept).map(([k, v]) => {
      args.push(v);
      return `${k} = $${args.length}`;
    }),
  ];
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM series WHERE ${where.join(' AND ')}`,
    args,
  );
  return {
    ...(out as Omit<SeriesOptions, 'selection' | 'matches'>),
    selection: kept,
    matches: rows[0]!.n,
  };
}
