/** The client, server and gap views of one edge overlaid on one chart, with the server's verdict in words. */
import { useMemo, useState } from 'react';
import type { EdgeResponse } from '@onset/contract';
import { edgeFrame } from './graphs/edgeData.ts';
import {
  BREAKDOWN_CHART_HEIGHT,
  BreakdownChart,
  type PageChartContext,
} from './graphs/BreakdownChart.tsx';
import { QuantileToggle, type MedianOrTail } from './Controls.tsx';
import { formatDelta, formatLatencyMs } from '../lib/format.ts';
import type { LevelBand } from './graphs/ChartOverlay.tsx';
import { Loading } from './States.tsx';

export function EdgePanel({
  edge,
  bands,
  ...page
}: PageChartContext & { edge: EdgeResponse | undefined; bands?: readonly LevelBand[] }) {
  const { scale } = page;
  const [q, setQ] = useState<MedianOrTail>('0.5');
  const frame = useMemo(
    () => (edge ? edgeFrame(edge, q, { dropNonPositive: scale === 'log' }) : null),
    [edge, q, scale],
  );
  if (!edge || !frame)
    return <Loading label="Loading the edge views…" height={BREAKDOWN_CHART_HEIGHT + 60} />;
  const verdict = edge.verdict[q] ?? null;

  return (
    <div className="edge-panel" data-testid="edge-panel">
      <div className="row between wrap gap">
        <p className="edge-title">
          <b>{edge.caller ?? '?'}</b> → <b>{edge.callee ?? '?'}</b>: the caller's view (client), the
          callee's view (server) and the gap between them, per call.
        </p>
        <QuantileToggle label="Quantile shown" value={q} onChange={setQ} />
      </div>
      <ul className="edge-summary" aria-label="Edge views">
        {edge.views.map((v) => {
          const s = v.summary[q];
          if (!v.series || !s)
            return (
              <li key={v.view} className="edge-view muted" data-view={v.view}>
                <b>{v.view}</b> not reported
              </li>
            );
          return (
            <li key={v.view} className={`edge-view edge-${v.view}`} data-view={v.view}>
              <i
                className={`swatch line-${v.view}${v.view === 'server' ? ' dashed' : ''}`}
                aria-hidden="true"
              />
              <b>{v.view}</b>{' '}
              {s.before_ms !== null && s.after_ms !== null ? (
                <>
                  {formatLatencyMs(s.before_ms)} → {formatLatencyMs(s.after_ms)}{' '}
                  <span className="muted">({formatDelta(s.before_ms, s.after_ms)})</span>
                </>
              ) : (
                <>
                  p{Number(q) * 100} ≈ {s.typical_ms === null ? '–' : formatLatencyMs(s.typical_ms)}
                </>
              )}
            </li>
          );
        })}
      </ul>
      {verdict ? (
        <p className="verdict" role="note">
          {verdict}
        </p>
      ) : null}
      <BreakdownChart
        page={page}
        frame={frame}
        bands={bands}
        chartId="edge"
        title={`Client, server and gap p${Number(q) * 100} of ${edge.caller} to ${edge.callee}`}
      />
    </div>
  );
}
