import type { Pool } from '../db/pool.ts';
import { COVERED_BY_SPANS } from '../otlp/registry.ts';

/**
 * The computed columns of a series (alias s), from the registry tables only (reference tables
 * on Citus, so the query stays plannable there):
 * - `hosts`: the hosts that feed it. An edge's views are filed under the caller and fed by both
 *   sides (edges/pairing.ts links the caller's and the callee's resources): the client view
 *   lists the caller's hosts, the server view the callee's, the gap both.
 * - `edge_view`: whether it is one of an edge's views (a gap, a callee's server view, or a view
 *   with a gap beside it), whose calls may be paired rather than its own spans.
 */
export const SERIES_COLUMNS = `COALESCE((SELECT array_agg(DISTINCT r.host ORDER BY r.host) FROM series_resources sr
                         JOIN resources r ON r.id = sr.resource_id
                        WHERE sr.series_id = s.id AND r.host <> ''
                          AND CASE WHEN s.peer = '' OR s.view IN ('gap', 'internal') THEN true
                                   WHEN s.view = 'client' THEN r.service = s.service
                                   ELSE r.service = s.peer END), '{}') AS hosts,
       (s.view = 'gap' OR (s.view = 'server' AND s.peer <> '')
        OR EXISTS (SELECT 1 FROM series g WHERE g.view = 'gap' AND g.service = s.service
                     AND g.op = s.op AND g.name = s.name AND g.peer = s.peer)) AS edge_view`;

/** Span probes in flight at once for one answer (a share of the pool). */
const SPAN_PROBES_AT_ONCE = 4;

export type CallsFrom = 'spans' | 'metrics' | 'paired_spans';

/**
 * `calls_from`, what a series' calls are counted from (api.md "Series"): its own spans (the
 * same calls' OTLP metrics, if any, are not added: otlp/store-metrics.ts), OTLP metrics alone,
 * or calls paired from client and server spans (an edge view); and `metrics_not_counted`, when
 * it has both, or spans in a view whose metric naming no route they cover (registry
 * COVERED_BY_SPANS). Asked apart from the registry query: on Citus span_durations is distributed
 * and metric_streams local, which one statement cannot join with the registry.
 */
export async function withCallsFrom<
  R extends { id: string; edge_view: boolean; service: string; view: string; op: string },
>(
  pool: Pool,
  rows: R[],
): Promise<Array<Omit<R, 'edge_view'> & { calls_from: CallsFrom; metrics_not_counted: boolean }>> {
  if (!rows.length) return [];
  const [{ rows: metrics }, { rows: covered }] = await Promise.all([
    pool.query<{ id: string }>(
      `SELECT DISTINCT series_id::text AS id FROM metric_streams WHERE series_id = ANY ($1::bigint[])`,
      [rows.map((r) => r.id)],
    ),
    // Views whose metric naming no route (Python's http.client.duration) the spans cover.
    pool.query<{ service: string; view: string; op: string }>(
      `SELECT DISTINCT service, view, op FROM series WHERE folded_into = $1 AND service = ANY ($2::text[])`,
      [COVERED_BY_SPANS, [...new Set(rows.map((r) => r.service))]],
    ),
  ]);
  const viewOf = (r: { service: string; view: string; op: string }) =>
    `${r.service}\u0001${r.view}\u0001${r.op}`;
  const coveredViews = new Set(covered.map(viewOf));
  const hasMetrics = new Set(metrics.map((r) => r.id));
  const metricsBeside = (r: R) => hasMetrics.has(r.id) || coveredViews.has(viewOf(r));
  // Whether it has spans of its own matters only beside metrics or on an edge's view; one
  // index probe each (it stops at the first row), as its own statement, which Citus routes to
  // the series' shard.
  const hasSpans = new Set<string>();
  const ask = rows.filter((r) => metricsBeside(r) || r.edge_view).map((r) => r.id);
  for (let i = 0; i < ask.length; i += SPAN_PROBES_AT_ONCE) {
    const probes = ask.slice(i, i + SPAN_PROBES_AT_ONCE).map(async (id) => {
      const { rows: found } = await pool.query(
        'SELECT 1 FROM span_durations WHERE series_id = $1 LIMIT 1',
        [id],
      );
      if (found.length) hasSpans.add(id);
    });
    await Promise.all(probes);
  }
  return rows.map(({ edge_view, ...r }) => ({
    ...r,
    calls_from: hasSpans.has(r.id)
      ? 'spans'
      : hasMetrics.has(r.id)
        ? 'metrics'
        : edge_view
          ? 'paired_spans'
          : 'spans',
    metrics_not_counted: hasSpans.has(r.id) && metricsBeside(r as R),
  }));
}
