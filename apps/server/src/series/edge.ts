/**
 * The edge views of a series (GET /api/v1/series/{id}/edge): which series are
 * the client, server and gap views of its edge (core's findEdge over the
 * series with the same op and name), their quantile columns, and what
 * changed on which side (core's summarizeView and edgeVerdict).
 */
import {
  EDGE_VIEWS,
  edgeVerdict,
  findEdge,
  summarizeView,
  type EdgeView,
  type EdgeViewSummary,
} from '@onset/core';
import type { EdgeResponse, Series } from '@onset/contract';
import type { Pool } from '../db/pool.ts';
import { listSeries, quantileColumns } from './queries.ts';

export async function edgeViews(
  pool: Pool,
  series: Series,
  o: { fromMs: number; toMs: number; stepMs: number; qs: number[]; onsetMs?: number },
): Promise<EdgeResponse> {
  const { series: candidates } = await listSeries(pool, { op: series.op, name: series.name });
  const edge = findEdge(candidates, series);
  const qKeys = o.qs.map(String);
  const views = await Promise.all(
    EDGE_VIEWS.map(async (view) => {
      const s = edge[view];
      const columns = s
        ? await quantileColumns(
            pool,
            { seriesId: s.id, fromMs: o.fromMs, toMs: o.toMs, stepMs: o.stepMs },
            o.qs,
          )
        : null;
      const summary: Record<string, EdgeViewSummary> = {};
      if (columns)
        for (const q of qKeys) summary[q] = summarizeView(columns.t, columns.q[q] ?? [], o.onsetMs);
      return { view, series: s, columns, summary };
    }),
  );
  const verdict: Record<string, string | null> = {};
  for (const q of qKeys) {
    const byView: Partial<Record<EdgeView, EdgeViewSummary | null>> = {};
    for (const v of views) byView[v.view] = v.summary[q] ?? null;
    verdict[q] = edgeVerdict(byView);
  }
  return {
    series_id: series.id,
    caller: edge.caller,
    callee: edge.callee,
    from: new Date(o.fromMs).toISOString(),
    to: new Date(o.toMs).toISOString(),
    step_ms: o.stepMs,
    views,
    verdict,
  };
}
