/** The client, server and gap views of one edge overlaid on one chart, with the verdict in words. */
import { useMemo, useState } from 'react';
import { useQuantiles } from '../api/queries.ts';
import type { Series } from '@onset/contract';
import { EDGE_VIEWS, edgeVerdict, shapeEdge, type EdgeView } from './graphs/edgeData.ts';
import {
  BREAKDOWN_CHART_HEIGHT,
  BreakdownChart,
  type PageChartContext,
} from './graphs/BreakdownChart.tsx';
import { ErrorState, Loading } from './States.tsx';
import { QuantileToggle, type MedianOrTail } from './Controls.tsx';
import { formatDelta, formatLatencyMs } from '../lib/format.ts';
import type { LevelBand } from './graphs/ChartOverlay.tsx';

export function EdgePanel({
  edge,
  bands,
  ...page
}: PageChartContext & {
  edge: {
    client: Series | null;
    server: Series | null;
    gap: Series | null;
    caller: string | null;
    callee: string | null;
  };
  bands?: readonly LevelBand[];
}) {
  const { range, scale, onsetMs } = page;
  const [q, setQ] = useState<MedianOrTail>('0.5');
  const client = useQuantiles(edge.client?.id, { range, q: '0.5,0.99' });
  const server = useQuantiles(edge.server?.id, { range, q: '0.5,0.99' });
  const gap = useQuantiles(edge.gap?.id, { range, q: '0.5,0.99' });
  const queries: Record<EdgeView, typeof client> = { client, server, gap };
  const pending = EDGE_VIEWS.some(
    (v) => edge[v] && queries[v].data === undefined && !queries[v].error,
  );
  const error = EDGE_VIEWS.map((v) => (edge[v] ? queries[v].error : null)).find(Boolean);

  const shaped = useMemo(
    () =>
      pending
        ? null
        : shapeEdge({ client: client.data, server: server.data, gap: gap.data }, q, {
            onsetMs,
            dropNonPositive: scale === 'log',
          }),
    [pending, client.data, server.data, gap.data, q, onsetMs, scale],
  );
  const verdict = shaped ? edgeVerdict(shaped.summary) : null;
  const missing = EDGE_VIEWS.filter((v) => !edge[v]);

  return (
    <div className="edge-panel" data-testid="edge-panel">
      <div className="row between wrap gap">
        <p className="edge-title">
          <b>{edge.caller ?? '?'}</b> → <b>{edge.callee ?? '?'}</b>: the caller's view (client), the
          callee's view (server) and the gap between them, per call.
        </p>
        <QuantileToggle label="Quantile shown" value={q} onChange={setQ} />
      </div>
      {error ? <ErrorState error={error} what="edge views" /> : null}
      {shaped ? (
        <>
          <ul className="edge-summary" aria-label="Edge views">
            {shaped.summary.map((s) => (
              <li key={s.view} className={`edge-view edge-${s.view}`} data-view={s.view}>
                <i
                  className={`swatch line-${s.view}${s.view === 'server' ? ' dashed' : ''}`}
                  aria-hidden="true"
                />
                <b>{s.view}</b>{' '}
                {s.beforeMs !== null && s.afterMs !== null ? (
                  <>
                    {formatLatencyMs(s.beforeMs)} → {formatLatencyMs(s.afterMs)}{' '}
                    <span className="muted">({formatDelta(s.beforeMs, s.afterMs)})</span>
                  </>
                ) : (
                  <>
                    p{Number(q) * 100} ≈ {s.typicalMs === null ? '–' : formatLatencyMs(s.typicalMs)}
                  </>
                )}
              </li>
            ))}
            {missing.map((v) => (
              <li key={v} className="edge-view muted" data-view={v}>
                <b>{v}</b> not reported
              </li>
            ))}
          </ul>
          {verdict ? (
            <p className="verdict" role="note">
              {verdict}
            </p>
          ) : null}
          <BreakdownChart
            page={page}
            frame={shaped.frame}
            bands={bands}
            chartId="edge"
            title={`Client, server and gap p${Number(q) * 100} of ${edge.caller} to ${edge.callee}`}
          />
        </>
      ) : pending ? (
        <Loading label="Loading the edge views…" height={BREAKDOWN_CHART_HEIGHT + 60} />
      ) : null}
    </div>
  );
}
