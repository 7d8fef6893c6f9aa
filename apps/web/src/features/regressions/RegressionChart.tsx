import { useMemo } from 'react';
import { Link } from 'react-router-dom';
import type { QuantilesColumns, Regression, Series, Suspect } from '@onset/contract';
import { linkWithGlobals, useUrlState, type Scale } from '../../state/url.ts';
import { formatInstant } from '../../state/timeRange.ts';
import { formatLatencyMs } from '../../lib/format.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { Panel, ScaleToggle } from '../../components/Controls.tsx';
import { QuantilesChart } from '../../components/QuantilesChart.tsx';
import type { LevelBand } from '../../components/graphs/ChartOverlay.tsx';
import type { ChartMarker } from '../../components/graphs/markerData.ts';
import { shapeQuantiles } from '../../components/graphs/quantileData.ts';

export const MAIN_HEIGHT = 340;

/** The p50 and p99 around the onset with the before/after levels and the deploy markers. */
export function RegressionChart({
  r,
  series,
  seriesListed,
  quantiles,
  scale,
  setScale,
  resolved,
  markers,
  onsetMs,
  onZoom,
  where,
  top,
}: {
  r: Regression;
  series: Series | undefined;
  seriesListed: boolean;
  quantiles: { data: QuantilesColumns | undefined; error: unknown; refetch: () => unknown };
  scale: Scale;
  setScale: (s: Scale) => void;
  resolved: { fromMs: number; toMs: number };
  markers: ChartMarker[];
  onsetMs: number;
  onZoom: (a: number, b: number) => void;
  where: string;
  top: Suspect | undefined;
}) {
  const { params } = useUrlState();
  const frame = useMemo(
    () =>
      quantiles.data
        ? shapeQuantiles(quantiles.data, {
            quantiles: ['0.5', '0.99'],
            dropNonPositive: scale === 'log',
          })
        : null,
    [quantiles.data, scale],
  );
  const bands = useMemo<LevelBand[]>(
    () => [
      {
        key: 'before',
        label: `before: p50 ${formatLatencyMs(r.before.p50_ms)} · p99 ${formatLatencyMs(r.before.p99_ms)}`,
        x0: resolved.fromMs / 1000,
        x1: onsetMs / 1000,
        lo: r.before.p50_ms,
        hi: r.before.p99_ms,
      },
      {
        key: 'after',
        label: `after: p50 ${formatLatencyMs(r.after.p50_ms)} · p99 ${formatLatencyMs(r.after.p99_ms)}`,
        x0: onsetMs / 1000,
        x1: resolved.toMs / 1000,
        lo: r.after.p50_ms,
        hi: r.after.p99_ms,
      },
    ],
    [r.before, r.after, onsetMs, resolved],
  );
  return (
    <Panel
      title="Latency around the onset"
      actions={
        <>
          <ScaleToggle scale={scale} onChange={setScale} />
          {series ? (
            <Link className="btn" to={linkWithGlobals('/explorer', params, { series: series.id })}>
              Open in Explorer
            </Link>
          ) : null}
        </>
      }
    >
      {!series ? (
        seriesListed ? (
          <ErrorState
            error={new Error(`no series ${where} ${r.name} is stored any more`)}
            what="the series"
            height={MAIN_HEIGHT}
          />
        ) : (
          <Loading label="Finding the series…" height={MAIN_HEIGHT + 28} />
        )
      ) : (
        <QuantilesChart
          frame={frame}
          query={quantiles}
          scale={scale}
          range={resolved}
          height={MAIN_HEIGHT}
          markers={markers}
          bands={bands}
          onsetSec={onsetMs / 1000}
          onZoom={onZoom}
          chartId="regression"
          title={`p50 and p99 of ${r.name} on ${where}, ${scale} scale: before ${formatLatencyMs(r.before.p50_ms)} p50, after ${formatLatencyMs(r.after.p50_ms)} p50; onset ${formatInstant(onsetMs)}; ${markers.length} deploy markers${top ? `, top suspect ${top.kind}` : ''}`}
        />
      )}
    </Panel>
  );
}
