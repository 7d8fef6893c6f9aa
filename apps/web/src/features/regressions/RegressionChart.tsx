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
import type { RangeText } from '../../state/timeRange.ts';
import { CohortSplitNote, useCohortSplit } from './CohortSplit.tsx';
import { useQuantiles } from '../explorer/api.ts';
import { OverlaySelect } from '../explorer/ComparePanel.tsx';
import { overlayOf, shiftTimeText, withOverlay } from '../../components/graphs/overlayData.ts';
import { parseTime } from '@onset/contract';

export const MAIN_HEIGHT = 340;

/** The p50 and p99 around the onset with the before/after levels and the deploy markers. */
export function RegressionChart({
  r,
  series,
  seriesListed,
  quantiles,
  range,
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
  /** The window asked for (the cohort lines are read on it). */
  range: RangeText;
  scale: Scale;
  setScale: (s: Scale) => void;
  resolved: { fromMs: number; toMs: number };
  markers: ChartMarker[];
  onsetMs: number;
  onZoom: (a: number, b: number) => void;
  where: string;
  top: Suspect | undefined;
}) {
  const { params, set } = useUrlState();
  // The same window a day or a week earlier, dashed over the whole series' lines.
  const overlay = overlayOf(params.get('overlay'));
  const nowMs = Date.now();
  const earlier = useQuantiles(
    series?.id,
    {
      range: overlay
        ? {
            from: shiftTimeText(range.from, overlay.shiftMs, nowMs, parseTime),
            to: shiftTimeText(range.to, overlay.shiftMs, nowMs, parseTime),
          }
        : range,
      q: '0.5,0.99',
    },
    !!overlay,
  );
  const earlierData = overlay ? earlier.data : undefined;
  const frame = useMemo(() => {
    if (!quantiles.data) return null;
    const opts = { quantiles: ['0.5', '0.99'], dropNonPositive: scale === 'log' };
    const now = shapeQuantiles(quantiles.data, opts);
    return overlay && earlierData
      ? withOverlay(now, shapeQuantiles(earlierData, opts), overlay.shiftMs, overlay.label)
      : now;
  }, [quantiles.data, scale, overlay, earlierData]);
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
  // A cohort regression: the slow hosts' line and the fast rest's, each under its own levels
  // (r.before/after are the slow cohort's, so over the whole series they would contradict it).
  const split = useCohortSplit(r, range, quantiles.data, resolved, scale);
  const c = r.cohort;
  return (
    <Panel
      title="Latency around the onset"
      actions={
        <>
          <ScaleToggle scale={scale} onChange={setScale} />
          {split ? null : (
            <OverlaySelect
              value={overlay?.value ?? ''}
              onChange={(v) => set({ overlay: v || null })}
            />
          )}
          {series ? (
            <Link className="btn" to={linkWithGlobals('/explorer', params, { series: series.id })}>
              Open in Explorer
            </Link>
          ) : null}
        </>
      }
    >
      {split && c ? <CohortSplitNote cohort={c} /> : null}
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
          frame={split ? split.frame : frame}
          query={split ? split.query : quantiles}
          scale={scale}
          range={resolved}
          height={MAIN_HEIGHT}
          markers={markers}
          bands={split ? split.bands : bands}
          onsetSec={onsetMs / 1000}
          onZoom={onZoom}
          chartId="regression"
          title={
            split && c
              ? `p50 and p99 of ${r.name} on ${where}, ${scale} scale, split by ${c.attribute}: slow hosts (${c.slow.join(', ')}) before ${formatLatencyMs(r.before.p50_ms)} p50, after ${formatLatencyMs(r.after.p50_ms)} p50; fast hosts (${c.fast.join(', ')}) after ${c.levels ? formatLatencyMs(c.levels.fast.after.p50_ms) : 'unknown'} p50; onset ${formatInstant(onsetMs)}; ${markers.length} deploy markers${top ? `, top suspect ${top.kind}` : ''}`
              : `p50 and p99 of ${r.name} on ${where}, ${scale} scale: before ${formatLatencyMs(r.before.p50_ms)} p50, after ${formatLatencyMs(r.after.p50_ms)} p50; onset ${formatInstant(onsetMs)}; ${markers.length} deploy markers${top ? `, top suspect ${top.kind}` : ''}`
          }
        />
      )}
    </Panel>
  );
}
