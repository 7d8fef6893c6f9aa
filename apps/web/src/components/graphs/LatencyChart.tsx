/**
 * Latency over time: one or more lines on a log (default) or linear axis
 * with human units, optional call counts as faint bars on a second axis,
 * deploy markers, the onset line and shaded levels; drag to zoom.
 */
import { memo, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import { UPlotChart } from './UPlotChart.tsx';
import { Bands, MarkerChips, OnsetLabel, type LevelBand } from './ChartOverlay.tsx';
import { thinFrame, type LatencyFrame } from './latencyFrame.ts';
import type { ChartMarker } from './markerData.ts';
import {
  linearRange,
  logRange,
  logTicks,
  positiveExtent,
  latencyTickLabels,
} from './latencyAxis.ts';
import {
  RIGHT_GUTTER,
  axisFont,
  blankRightAxis,
  cursorSync,
  dragZoom,
  latencyAxis,
  markerLines,
  mergeHooks,
  readColors,
  timeAxis,
} from './uplotKit.ts';
import { formatCount, formatLatencyMs } from '../../lib/format.ts';
import { useTheme } from '../../app/theme.tsx';
import { formatInstant } from '../../lib/time.ts';
import { summarizeLines } from './chartSummary.ts';

export interface LatencyChartProps {
  frame: LatencyFrame;
  scale: 'log' | 'linear';
  height?: number;
  /** Visible time range (ms); the x axis spans it even where there is no data. */
  range: { fromMs: number; toMs: number };
  markers?: readonly ChartMarker[];
  bands?: readonly LevelBand[];
  onsetSec?: number;
  onZoom?: (fromMs: number, toMs: number) => void;
  showCount?: boolean;
  /** Charts with the same key share the cursor (e.g. quantiles and heatmap). */
  syncKey?: string;
  chartId?: string;
  /** What the chart shows, in words: read by screen readers. */
  title: string;
  selectedMarkerId?: string | null;
  onSelectMarker?: (id: string) => void;
}

// Stable defaults: a fresh [] per render would rebuild the chart on every render.
const NO_MARKERS: readonly ChartMarker[] = [];
const NO_BANDS: readonly LevelBand[] = [];

/** Memoised: a page re-render with the same data must not even diff the chart. */
export const LatencyChart = memo(function LatencyChart(p: LatencyChartProps) {
  // Draw at pixel resolution: 43,200 points per line become ≤ 4,000 (min and max per bucket).
  const frame = useMemo(() => thinFrame(p.frame), [p.frame]);
  const {
    scale,
    height = 320,
    range,
    markers = NO_MARKERS,
    bands = NO_BANDS,
    onsetSec,
    onZoom,
    showCount = true,
    syncKey,
    chartId,
  } = p;
  const { theme } = useTheme();
  const [cursorIdx, setCursorIdx] = useState<number | null>(null);
  // Callbacks through a ref: a new function identity must not rebuild the chart.
  const zoomRef = useRef(onZoom);
  zoomRef.current = onZoom;
  const canZoom = !!onZoom;

  const yRange = useMemo<[number, number]>(() => {
    const ext = positiveExtent(frame.lines.map((l) => l.values));
    const levels = bands.flatMap((b) => [b.lo, b.hi]).filter((v) => v > 0);
    const lo = Math.min(ext?.[0] ?? Infinity, ...levels);
    const hi = Math.max(ext?.[1] ?? -Infinity, ...levels);
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) return scale === 'log' ? [0.1, 1000] : [0, 1];
    return scale === 'log' ? logRange(lo, hi) : linearRange(hi);
  }, [frame, bands, scale]);

  const data = useMemo<uPlot.AlignedData>(() => {
    const cols: Array<Array<number | null>> = frame.lines.map((l) => l.values);
    if (showCount && frame.count) cols.push(frame.count);
    return [frame.x, ...cols] as uPlot.AlignedData;
  }, [frame, showCount]);

  const maxCount = useMemo(
    () => frame.count?.reduce<number>((m, v) => (v !== null && v > m ? v : m), 0) ?? 0,
    [frame],
  );
  // What changes with every refresh is read through this ref, so new data is a setData on the
  // same chart (no new canvas, no layout) and only a change of shape or style rebuilds it.
  const live = useRef({ yRange, maxCount, range, markers, onsetSec });
  live.current = { yRange, maxCount, range, markers, onsetSec };
  const bars = frame.x.length <= 1500;
  const shapeKey = `${frame.lines.map((l) => `${l.key}/${l.label}/${l.color}/${l.dash ? 1 : 0}/${l.width ?? ''}`).join(',')}|${showCount && frame.count ? (bars ? 'bars' : 'area') : ''}`;
  const hasDecor = markers.length > 0 || bands.length > 0;

  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(() => {
    void theme; // colours come from the theme's CSS variables
    const c = readColors();
    const zoom = dragZoom(canZoom ? (a, b) => zoomRef.current?.(a, b) : undefined);
    const series: uPlot.Series[] = [
      {},
      ...frame.lines.map<uPlot.Series>((l) => ({
        label: l.label,
        stroke: c.line[l.color] ?? c.fg,
        width: l.width ?? 1.5,
        dash: l.dash ? [6, 4] : undefined,
        spanGaps: false,
        points: { show: false },
      })),
    ];
    const withCount = showCount && !!frame.count;
    if (withCount)
      series.push({
        label: 'count',
        scale: 'count',
        stroke: 'transparent',
        fill: c.count,
        // Bars while they are countable; past that a filled line, which uPlot thins to one segment per pixel.
        paths: bars ? uPlot.paths.bars!({ size: [0.9, 40], align: 1 }) : undefined,
        points: { show: false },
      });
    const axes: uPlot.Axis[] = [timeAxis(c), latencyAxis(c, scale)];
    if (withCount)
      axes.push({
        scale: 'count',
        side: 1,
        stroke: c.muted,
        font: axisFont,
        size: RIGHT_GUTTER,
        grid: { show: false },
        ticks: { show: false },
        values: (_u, splits) =>
          splits.map((v) => (v <= live.current.maxCount ? formatCount(v) : '')),
      });
    else axes.push(blankRightAxis());
    return {
      padding: [hasDecor ? 44 : 12, 0, 0, 0],
      legend: { show: false },
      scales: {
        x: {
          time: true,
          range: () => [live.current.range.fromMs / 1000, live.current.range.toMs / 1000],
        },
        y:
          scale === 'log'
            ? { distr: 3, log: 10, range: () => live.current.yRange }
            : { distr: 1, range: () => live.current.yRange },
        // Counts fill the bottom quarter at most: context, not the subject.
        count: { range: () => [0, Math.max(1, live.current.maxCount) * 4] },
      },
      axes,
      series,
      cursor: { ...zoom.cursor, sync: cursorSync(syncKey) },
      hooks: mergeHooks(
        zoom.hooks,
        markerLines(
          c,
          () => live.current.markers,
          () => live.current.onsetSec,
        ),
        { setCursor: [(u) => setCursorIdx(u.cursor.idx ?? null)] },
      ),
    };
    // frame's lines are read for their styles only; shapeKey changes when those do.
  }, [theme, scale, shapeKey, hasDecor, canZoom, showCount, syncKey]);
  // Markers, onset or window moved without new data: redraw in place.
  const redrawKey = `${markers.map((m) => m.id).join(',')}|${onsetSec ?? ''}|${range.fromMs}|${range.toMs}`;

  const ticks = scale === 'log' ? latencyTickLabels(logTicks(yRange[0], yRange[1])) : [];
  const hasData = frame.lines.some((l) => l.values.some((v) => v !== null));
  // What the canvas shows, in words, for screen readers.
  const summary = useMemo(() => summarizeLines(frame.x, frame.lines), [frame]);

  return (
    <figure
      className="chart"
      data-y-scale={scale}
      data-y-ticks={ticks.join('|')}
      data-testid={chartId ? `chart-${chartId}` : undefined}
      aria-label={p.title}
    >
      <UPlotChart
        options={options}
        data={data}
        height={height}
        chartId={chartId}
        redrawKey={redrawKey}
        overlay={(u) => (
          <>
            <Bands u={u} bands={bands} />
            {onsetSec !== undefined ? <OnsetLabel u={u} onsetSec={onsetSec} /> : null}
            <MarkerChips
              u={u}
              markers={markers}
              selectedId={p.selectedMarkerId}
              onSelect={p.onSelectMarker}
            />
          </>
        )}
      />
      {!hasData ? <div className="chart-nodata">No data in this range</div> : null}
      <p className="sr-only" data-testid="chart-summary">
        {summary}
      </p>
      <figcaption className="chart-legend">
        <span className="legend-scale" title="Latency axis scale">
          {scale === 'log' ? 'log scale' : 'linear scale'}
        </span>
        {frame.lines.map((l) => {
          const v = cursorIdx !== null ? l.values[cursorIdx] : lastValue(l.values);
          return (
            <span key={l.key} className="legend-item">
              <i
                className={`swatch line-${l.color}${l.dash ? ' dashed' : ''}`}
                aria-hidden="true"
              />
              {l.label} <b>{v === null || v === undefined ? '–' : formatLatencyMs(v)}</b>
            </span>
          );
        })}
        {showCount && frame.count ? (
          <span className="legend-item">
            <i className="swatch swatch-count" aria-hidden="true" />
            calls/step{' '}
            <b>
              {formatCount(
                (cursorIdx !== null ? frame.count[cursorIdx] : lastValue(frame.count)) ?? NaN,
              )}
            </b>
          </span>
        ) : null}
        {frame.thinned ? (
          <span
            className="legend-item muted"
            title="Each pixel column shows the minimum and maximum of the points it covers"
          >
            min–max per{' '}
            {formatSpan(((frame.x[frame.x.length - 1]! - frame.x[0]!) * 2000) / frame.x.length)}
          </span>
        ) : null}
        {cursorIdx !== null && frame.x[cursorIdx] !== undefined ? (
          <span className="legend-time muted">
            {formatInstant(frame.x[cursorIdx]! * 1000, true)}
          </span>
        ) : null}
      </figcaption>
    </figure>
  );
});

function formatSpan(ms: number): string {
  const min = Math.round(ms / 60_000);
  return min < 120 ? `${min} min` : `${Math.round(min / 60)} h`;
}

function lastValue(values: ReadonlyArray<number | null>): number | null {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null) return values[i]!;
  return null;
}
