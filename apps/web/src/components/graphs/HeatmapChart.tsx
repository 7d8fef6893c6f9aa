/**
 * Latency heatmap: time columns × log-latency rows, colour = log(count).
 * Shows what quantile lines hide: a second mode (a cohort of slow hosts),
 * or a whole distribution moving up after a deploy.
 */
import { memo, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import { UPlotChart } from './UPlotChart.tsx';
import { MarkerChips } from './ChartOverlay.tsx';
import { cellIntensity, type HeatmapFrame } from './heatmapData.ts';
import type { ChartMarker } from './markerData.ts';
import {
  blankRightAxis,
  cursorSync,
  dragBox,
  dragZoom,
  latencyAxis,
  latencyScale,
  markerLines,
  mergeHooks,
  readColors,
  timeAxis,
} from './uplotKit.ts';
import { logRange } from './latencyAxis.ts';
import { formatCount, formatLatencyMs } from '../../lib/format.ts';
import { useTheme } from '../../app/theme.tsx';
import { formatInstant } from '../../lib/time.ts';
import { summarizeHeatmap } from './chartSummary.ts';

export interface HeatmapChartProps {
  frame: HeatmapFrame;
  range: { fromMs: number; toMs: number };
  height?: number;
  markers?: readonly ChartMarker[];
  onZoom?: (fromMs: number, toMs: number) => void;
  /** When given, a drag selects a box (time range × latency band) instead of zooming. */
  onSelectBox?: (
    fromMs: number | null,
    toMs: number | null,
    loMs: number | null,
    hiMs: number | null,
  ) => void;
  syncKey?: string;
  chartId?: string;
  title: string;
}

const NO_MARKERS: readonly ChartMarker[] = [];

export const HeatmapChart = memo(function HeatmapChart(p: HeatmapChartProps) {
  const { frame, range, height = 260, markers = NO_MARKERS, syncKey, chartId } = p;
  const { theme } = useTheme();
  const zoomRef = useRef(p.onZoom);
  zoomRef.current = p.onZoom;
  const canZoom = !!p.onZoom;
  const boxRef = useRef(p.onSelectBox);
  boxRef.current = p.onSelectBox;
  const canBox = !!p.onSelectBox;
  const [hover, setHover] = useState<{ col: number; row: number } | null>(null);

  const summary = useMemo(() => summarizeHeatmap(frame), [frame]);
  const yRange = useMemo<[number, number]>(() => {
    if (!frame.rows.length) return [0.1, 1000];
    return logRange(frame.rows[0]!.loMs, frame.rows[frame.rows.length - 1]!.hiMs);
  }, [frame]);

  const data = useMemo<uPlot.AlignedData>(
    () => [frame.x, frame.x.map(() => null)] as uPlot.AlignedData,
    [frame],
  );

  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(() => {
    void theme;
    const c = readColors();
    const zoom = canBox
      ? dragBox((a, b, lo, hi) => boxRef.current?.(a, b, lo, hi))
      : dragZoom(canZoom ? (a, b) => zoomRef.current?.(a, b) : undefined);
    const nRows = frame.rows.length;
    const stepSec = frame.stepMs / 1000;
    const [hr, hg, hb] = c.heat;
    const cells: uPlot.Hooks.Arrays = {
      drawAxes: [
        (u) => {
          const ctx = u.ctx;
          const { left, top, width, height: h } = u.bbox;
          ctx.save();
          ctx.beginPath();
          ctx.rect(left, top, width, h);
          ctx.clip();
          const rowY = frame.rows.map(
            (r) => [u.valToPos(r.hiMs, 'y', true), u.valToPos(r.loMs, 'y', true)] as const,
          );
          for (let col = 0; col < frame.x.length; col++) {
            const x0 = u.valToPos(frame.x[col]!, 'x', true);
            const x1 = u.valToPos(frame.x[col]! + stepSec, 'x', true);
            const w = Math.max(1, x1 - x0);
            for (let row = 0; row < nRows; row++) {
              const a = cellIntensity(frame.counts[col * nRows + row]!, frame.maxCount);
              if (a === 0) continue;
              const [y0, y1] = rowY[row]!;
              ctx.fillStyle = `rgba(${hr},${hg},${hb},${a.toFixed(3)})`;
              ctx.fillRect(x0, y0, w, Math.max(1, y1 - y0));
            }
          }
          ctx.restore();
        },
      ],
    };
    return {
      padding: [markers.length ? 44 : 12, 0, 0, 0],
      legend: { show: false },
      scales: {
        x: { time: true, range: () => [range.fromMs / 1000, range.toMs / 1000] },
        y: latencyScale('log', yRange),
      },
      axes: [timeAxis(c), latencyAxis(c, 'log'), blankRightAxis()],
      series: [{}, { label: 'heat', stroke: 'transparent', points: { show: false } }],
      cursor: { ...zoom.cursor, points: { show: false }, sync: cursorSync(syncKey) },
      hooks: mergeHooks(cells, markerLines(c, markers), zoom.hooks, {
        setCursor: [
          (u) => {
            const { left, top } = u.cursor;
            if (left === undefined || top === undefined || left < 0 || top < 0)
              return setHover(null);
            const t = u.posToVal(left, 'x');
            const v = u.posToVal(top, 'y');
            const col = frame.x.findIndex((x) => t >= x && t < x + stepSec);
            const row = frame.rows.findIndex((r) => v >= r.loMs && v < r.hiMs);
            setHover(col >= 0 && row >= 0 ? { col, row } : null);
          },
        ],
      }),
    };
  }, [theme, frame, yRange, markers, canZoom, canBox, syncKey, range.fromMs, range.toMs]);

  const cell = hover
    ? {
        row: frame.rows[hover.row]!,
        t: frame.x[hover.col]!,
        n: frame.counts[hover.col * frame.rows.length + hover.row]!,
      }
    : null;
  return (
    <figure
      className="chart"
      data-y-scale="log"
      data-testid={chartId ? `chart-${chartId}` : undefined}
      aria-label={p.title}
    >
      <UPlotChart
        options={options}
        data={data}
        height={height}
        chartId={chartId}
        overlay={(u) => <MarkerChips u={u} markers={markers} />}
      />
      {frame.total === 0 ? <div className="chart-nodata">No data in this range</div> : null}
      <p className="sr-only" data-testid="chart-summary">
        {summary}
      </p>
      <figcaption className="chart-legend">
        <span className="legend-scale">log scale</span>
        <span className="legend-item">
          <i className="swatch swatch-heat" aria-hidden="true" /> calls per cell (log colour), max{' '}
          <b>{formatCount(frame.maxCount)}</b>
        </span>
        {frame.nonPositive > 0 ? (
          <span className="legend-item muted">
            {formatCount(frame.nonPositive)} values ≤ 0 not shown
          </span>
        ) : null}
        {cell ? (
          <span className="legend-time">
            {formatInstant(cell.t * 1000, true)} · {formatLatencyMs(cell.row.loMs)}–
            {formatLatencyMs(cell.row.hiMs)} · <b>{formatCount(cell.n)}</b> calls
          </span>
        ) : null}
      </figcaption>
    </figure>
  );
});
