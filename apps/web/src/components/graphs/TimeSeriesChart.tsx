/** A plain time-series chart (lines + horizontal threshold lines) for SLO burn rates and budgets. */
import { useMemo, useState } from 'react';
import uPlot from 'uplot';
import { UPlotChart } from './UPlotChart.tsx';
import { axisFont, blankRightAxis, mergeHooks, readColors, timeAxis } from './uplotKit.ts';
import { useTheme } from '../../app/theme.tsx';
import { logTicks } from './latencyAxis.ts';
import { formatInstant } from '../../lib/time.ts';
import { summarizeLines } from './chartSummary.ts';

export interface TimeLine {
  key: string;
  label: string;
  /** CSS custom property holding the colour, e.g. "--line-p99". */
  colorVar: string;
  values: Array<number | null>;
  dash?: boolean;
}

export interface Threshold {
  value: number;
  colorVar: string;
  label: string;
}

export function TimeSeriesChart({
  x,
  lines,
  thresholds = [],
  yScale,
  yRange,
  format,
  range,
  height = 220,
  title,
  chartId,
}: {
  x: number[];
  lines: TimeLine[];
  thresholds?: Threshold[];
  yScale: 'log' | 'linear';
  yRange: [number, number];
  format: (v: number) => string;
  range: { fromMs: number; toMs: number };
  height?: number;
  title: string;
  chartId?: string;
}) {
  const { theme } = useTheme();
  const [idx, setIdx] = useState<number | null>(null);
  const data = useMemo(() => [x, ...lines.map((l) => l.values)] as uPlot.AlignedData, [x, lines]);
  const summary = useMemo(() => summarizeLines(x, lines, format), [x, lines, format]);
  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(() => {
    void theme;
    const c = readColors();
    const css = getComputedStyle(document.documentElement);
    const color = (v: string) => css.getPropertyValue(v).trim() || c.fg;
    const thresholdHook: uPlot.Hooks.Arrays = {
      drawAxes: [
        (u) => {
          const ctx = u.ctx;
          const { left, width, top, height: h } = u.bbox;
          ctx.save();
          ctx.font = `${10 * uPlot.pxRatio}px system-ui, sans-serif`;
          for (const t of thresholds) {
            const y = Math.round(u.valToPos(t.value, 'y', true));
            if (y < top || y > top + h) continue;
            ctx.strokeStyle = color(t.colorVar);
            ctx.globalAlpha = 0.9;
            ctx.setLineDash([6 * uPlot.pxRatio, 4 * uPlot.pxRatio]);
            ctx.lineWidth = uPlot.pxRatio;
            ctx.beginPath();
            ctx.moveTo(left, y);
            ctx.lineTo(left + width, y);
            ctx.stroke();
            ctx.fillStyle = color(t.colorVar);
            ctx.fillText(t.label, left + 4 * uPlot.pxRatio, y - 3 * uPlot.pxRatio);
          }
          ctx.restore();
        },
      ],
    };
    return {
      padding: [12, 0, 0, 0],
      legend: { show: false },
      scales: {
        x: { time: true, range: () => [range.fromMs / 1000, range.toMs / 1000] },
        y: yScale === 'log' ? { distr: 3, log: 10, range: () => yRange } : { range: () => yRange },
      },
      axes: [
        timeAxis(c),
        {
          stroke: c.muted,
          font: axisFont,
          size: 64,
          grid: { stroke: c.grid, width: 1 },
          ticks: { stroke: c.grid, width: 1 },
          splits: yScale === 'log' ? (_u, _i, min, max) => logTicks(min, max) : undefined,
          values: (_u, s) => s.map(format),
        },
        blankRightAxis(),
      ],
      series: [
        {},
        ...lines.map<uPlot.Series>((l) => ({
          label: l.label,
          stroke: color(l.colorVar),
          width: 1.75,
          dash: l.dash ? [6, 4] : undefined,
          points: { show: false },
          spanGaps: false,
        })),
      ],
      cursor: { drag: { x: false, y: false }, points: { size: 5 } },
      hooks: mergeHooks(thresholdHook, { setCursor: [(u) => setIdx(u.cursor.idx ?? null)] }),
    };
    // format/thresholds/lines are re-created by callers each render; their content is keyed by the data below.
  }, [
    theme,
    yScale,
    yRange[0],
    yRange[1],
    range.fromMs,
    range.toMs,
    lines.map((l) => l.key + l.colorVar).join(),
    thresholds.map((t) => `${t.value}${t.label}`).join(),
  ]);

  return (
    <figure
      className="chart"
      aria-label={title}
      data-testid={chartId ? `chart-${chartId}` : undefined}
      data-y-scale={yScale}
    >
      <UPlotChart options={options} data={data} height={height} chartId={chartId} />
      <p className="sr-only" data-testid="chart-summary">
        {summary}
      </p>
      <figcaption className="chart-legend">
        {lines.map((l) => {
          const v = idx !== null ? l.values[idx] : lastOf(l.values);
          return (
            <span key={l.key} className="legend-item">
              <i
                className="swatch"
                style={{ background: `var(${l.colorVar})` }}
                aria-hidden="true"
              />
              {l.label} <b>{v === null || v === undefined ? '–' : format(v)}</b>
            </span>
          );
        })}
        {thresholds.map((t) => (
          <span
            key={`${t.value}${t.label}`}
            className="legend-item legend-threshold"
            data-threshold={t.value}
          >
            <i
              className="swatch dashed"
              style={{ borderColor: `var(${t.colorVar})` }}
              aria-hidden="true"
            />
            {t.label}
          </span>
        ))}
        {idx !== null && x[idx] !== undefined ? (
          <span className="legend-time">{formatInstant(x[idx]! * 1000, true)}</span>
        ) : null}
      </figcaption>
    </figure>
  );
}

function lastOf(values: ReadonlyArray<number | null>): number | null {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null) return values[i]!;
  return null;
}
