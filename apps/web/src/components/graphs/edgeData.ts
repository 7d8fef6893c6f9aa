/**
 * One edge, three views on one chart: the server's answer (GET
 * /api/v1/series/{id}/edge) shaped for drawing. Which series are the views,
 * their medians and the verdict come from the server; this only lines the
 * three quantile lines up on one time axis.
 */
import type { EdgeResponse } from '@onset/contract';
import { alignLines, type LatencyFrame, type LineColor } from './latencyFrame.ts';
import { timedValues } from './quantileData.ts';

export function edgeFrame(
  edge: EdgeResponse,
  q: string,
  opts: { dropNonPositive?: boolean } = {},
): LatencyFrame {
  return alignLines(
    edge.views
      .filter((v) => v.columns)
      .map((v) => ({
        key: v.view,
        label: v.view === 'gap' ? 'gap (client − server)' : v.view,
        color: v.view as LineColor,
        width: v.view === 'gap' ? 2 : 1.5,
        dash: v.view === 'server',
        points: timedValues(v.columns!, q, opts),
      })),
    edge.step_ms,
  );
}

/** How many views of the edge report data (a panel is worth it from two). */
export function reportedViews(edge: EdgeResponse | undefined): number {
  return edge ? edge.views.filter((v) => v.series).length : 0;
}
