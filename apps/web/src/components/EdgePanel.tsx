/** The client, server and gap views of one edge overlaid on one chart, with the verdict in words. */
import { useMemo, useState } from 'react';
import { useQuantiles } from '../api/queries.ts';
import type { Series } from '../api/types.ts';
import type { RangeText } from '../state/timeRange.ts';
import { EDGE_VIEWS, edgeVerdict, shapeEdge, type EdgeView } from './graphs/edgeData.ts';
import { LatencyChart } from './graphs/LatencyChart.tsx';
import type { ChartMarker } from './graphs/markerData.ts';
import { ErrorState, Loading } from './States.tsx';
import { formatDelta, formatLatencyMs } from '../lib/format.ts';
import type { LevelBand } from './graphs/ChartOverlay.tsx';

const HEIGHT = 280;

export function EdgePanel({
  edge,
  range,
  resolved,
  scale,
  markers,
  onsetMs,
  onZoom,
  bands,
}: {
  edge: {
    client: Series | null;
    server: Series | null;
    gap: Series | null;
    caller: string | null;
    callee: string | null;
  };
  range: RangeText;
  resolved: { fromMs: number; toMs: number };
  scale: 'log' | 'linear';
  markers: readonly ChartMarker[];
  onsetMs?: number;
  onZoom?: (a: number, b: number) => void;
  bands?: readonly LevelBand[];
}) {
  const [q, setQ] = useState<'0.5' | '0.99'>('0.5');
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
        <div className="segmented" role="group" aria-label="Quantile shown">
          {(['0.5', '0.99'] as const).map((x) => (
            <button
              key={x}
              type="button"
              className={`btn ${q === x ? 'active' : ''}`}
              aria-pressed={q === x}
              onClick={() => setQ(x)}
            >
              p{Number(x) * 100}
            </button>
          ))}
        </div>
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
          <LatencyChart
            frame={shaped.frame}
            scale={scale}
            range={resolved}
            height={HEIGHT}
            markers={markers}
            onsetSec={onsetMs !== undefined ? onsetMs / 1000 : undefined}
            onZoom={onZoom}
            bands={bands}
            showCount={false}
            chartId="edge"
            title={`Client, server and gap p${Number(q) * 100} of ${edge.caller} to ${edge.callee}`}
          />
        </>
      ) : pending ? (
        <Loading label="Loading the edge views…" height={HEIGHT + 60} />
      ) : null}
    </div>
  );
}
