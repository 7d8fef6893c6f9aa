/** Shared uPlot pieces: theme colours, latency axes, drag-to-zoom, deploy marker lines. */
import uPlot from 'uplot';
import { latencyTickLabels, logTicks } from './latencyAxis.ts';
import { timeAxisLabels } from '../../lib/time.ts';
import type { ChartMarker } from './markerData.ts';
import { DEPLOY_KINDS } from '@onset/contract';

export interface ChartColors {
  fg: string;
  muted: string;
  grid: string;
  bg: string;
  onset: string;
  suspect: string;
  line: Record<string, string>;
  kind: Record<string, string>;
  count: string;
  heat: [number, number, number];
}

const cssVar = (style: CSSStyleDeclaration, name: string, dflt: string) =>
  style.getPropertyValue(name).trim() || dflt;

/** Colours from the CSS custom properties of the current theme (canvas cannot read CSS variables itself). */
export function readColors(): ChartColors {
  const s = getComputedStyle(document.documentElement);
  const v = (n: string, d: string) => cssVar(s, n, d);
  const line: Record<string, string> = {};
  for (const k of ['p50', 'p90', 'p99', 'p999', 'client', 'server', 'gap'])
    line[k] = v(`--line-${k}`, '#888');
  for (let i = 0; i < 8; i++) line[`c${i}`] = v(`--cohort-${i}`, '#888');
  const kind: Record<string, string> = {};
  for (const k of DEPLOY_KINDS) kind[k] = v(`--kind-${k}`, '#888');
  const heat = v('--heat-rgb', '229, 72, 77')
    .split(',')
    .map((x) => Number(x.trim())) as [number, number, number];
  return {
    fg: v('--fg', '#222'),
    muted: v('--muted', '#777'),
    grid: v('--grid', 'rgba(128,128,128,0.15)'),
    bg: v('--bg', '#fff'),
    onset: v('--onset', '#d6336c'),
    suspect: v('--suspect', '#e5484d'),
    line,
    kind,
    count: v('--count', 'rgba(128,128,128,0.25)'),
    heat,
  };
}

export const axisFont = '11px system-ui, -apple-system, "Segoe UI", sans-serif';

/** Time x axis (seconds): 24-hour labels with the date and the zone (lib/time.ts), never uPlot's 12-hour default. */
export function timeAxis(c: ChartColors): uPlot.Axis {
  return {
    values: (_u, splits, _axis, _space, incr) =>
      timeAxisLabels(
        splits.map((s) => (s === null || s === undefined ? null : s * 1000)),
        incr * 1000,
      ),
    stroke: c.muted,
    font: axisFont,
    grid: { stroke: c.grid, width: 1 },
    ticks: { stroke: c.grid, width: 1 },
  };
}

/** Latency y axis: log (decade ticks, human units) or linear. */
export function latencyAxis(c: ChartColors, scale: 'log' | 'linear', scaleKey = 'y'): uPlot.Axis {
  return {
    scale: scaleKey,
    stroke: c.muted,
    font: axisFont,
    size: 64,
    grid: { stroke: c.grid, width: 1 },
    ticks: { stroke: c.grid, width: 1 },
    splits: scale === 'log' ? (_u, _i, min, max) => logTicks(min, max) : undefined,
    values: (_u, splits) => latencyTickLabels(splits),
  };
}

export function latencyScale(scale: 'log' | 'linear', range: [number, number]): uPlot.Scale {
  return scale === 'log'
    ? { distr: 3, log: 10, range: () => range }
    : { distr: 1, range: () => range };
}

/**
 * Drag across the plot to zoom: the selection becomes the new range (the
 * caller puts it in the URL). uPlot's own scale change is suppressed so the
 * data is re-fetched at the new resolution instead of stretched.
 */
export function dragZoom(
  onZoom?: (fromMs: number, toMs: number) => void,
): Pick<uPlot.Options, 'cursor'> & { hooks: uPlot.Hooks.Arrays } {
  return {
    cursor: { drag: { x: !!onZoom, y: false, setScale: false }, points: { size: 6 } },
    hooks: {
      setSelect: [
        (u) => {
          if (!onZoom) return;
          const { left, width } = u.select;
          if (width > 4) {
            const a = u.posToVal(left, 'x');
            const b = u.posToVal(left + width, 'x');
            onZoom(a * 1000, b * 1000);
          }
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
        },
      ],
    },
  };
}

/**
 * Drag a box on the plot to select (time × latency, e.g. on a heatmap) instead of zooming:
 * reports the box's time range (ms) and latency band (ms, low to high); a side under 6 px
 * tall (or wide) selects no band (or the whole time range), as null. uPlot's scale stays.
 */
export function dragBox(
  onBox: (
    fromMs: number | null,
    toMs: number | null,
    loMs: number | null,
    hiMs: number | null,
  ) => void,
): Pick<uPlot.Options, 'cursor'> & { hooks: uPlot.Hooks.Arrays } {
  return {
    cursor: { drag: { x: true, y: true, setScale: false }, points: { size: 6 } },
    hooks: {
      setSelect: [
        (u) => {
          const { left, top, width, height } = u.select;
          if (width > 4 || height > 4) {
            const wide = width >= 6;
            const tall = height >= 6;
            const a = wide ? u.posToVal(left, 'x') * 1000 : null;
            const b = wide ? u.posToVal(left + width, 'x') * 1000 : null;
            const hi = tall ? u.posToVal(top, 'y') : null;
            const lo = tall ? u.posToVal(top + height, 'y') : null;
            onBox(a, b, lo, hi);
          }
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
        },
      ],
    },
  };
}

/** Vertical deploy lines (and the onset line) drawn under the data; labels are DOM chips (see ChartOverlay). */
export function markerLines(
  c: ChartColors,
  markersOf: readonly ChartMarker[] | (() => readonly ChartMarker[]),
  onsetOf?: number | (() => number | undefined),
): uPlot.Hooks.Arrays {
  return {
    drawAxes: [
      (u) => {
        const markers = typeof markersOf === 'function' ? markersOf() : markersOf;
        const onsetSec = typeof onsetOf === 'function' ? onsetOf() : onsetOf;
        const ctx = u.ctx;
        const { top, height, left, width } = u.bbox;
        const px = uPlot.pxRatio;
        ctx.save();
        ctx.beginPath();
        ctx.rect(left, top, width, height);
        ctx.clip();
        for (const m of markers) {
          const x = Math.round(u.valToPos(m.t, 'x', true));
          if (x < left - 1 || x > left + width + 1) continue;
          const color = c.kind[m.kind] ?? c.muted;
          if (m.suspectRank === 1) {
            // A halo so the top suspect stands out even among many markers.
            ctx.strokeStyle = c.suspect;
            ctx.globalAlpha = 0.25;
            ctx.lineWidth = 7 * px;
            ctx.setLineDash([]);
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            ctx.globalAlpha = 1;
          }
          ctx.strokeStyle = m.suspectRank === 1 ? c.suspect : color;
          ctx.lineWidth = (m.suspectRank === 1 ? 2 : 1) * px;
          ctx.setLineDash(m.suspectRank === 1 ? [] : [4 * px, 3 * px]);
          ctx.beginPath();
          ctx.moveTo(x, top);
          ctx.lineTo(x, top + height);
          ctx.stroke();
        }
        if (onsetSec !== undefined) {
          const x = Math.round(u.valToPos(onsetSec, 'x', true));
          ctx.strokeStyle = c.onset;
          ctx.lineWidth = 2 * px;
          ctx.setLineDash([2 * px, 2 * px]);
          ctx.beginPath();
          ctx.moveTo(x, top);
          ctx.lineTo(x, top + height);
          ctx.stroke();
        }
        ctx.restore();
      },
    ],
  };
}

/** Merge hook arrays from several helpers into one Options.hooks. */
export function mergeHooks(...parts: Array<uPlot.Hooks.Arrays | undefined>): uPlot.Hooks.Arrays {
  const out: Record<string, unknown[]> = {};
  for (const p of parts) {
    if (!p) continue;
    for (const [k, fns] of Object.entries(p))
      out[k] = [...(out[k] ?? []), ...((fns as unknown[]) ?? [])];
  }
  return out as uPlot.Hooks.Arrays;
}

/** An empty right-hand axis so charts stacked on a page share the same plot width (and cursor x). */
export const RIGHT_GUTTER = 48;
export function blankRightAxis(scaleKey = 'y'): uPlot.Axis {
  return {
    scale: scaleKey,
    side: 1,
    size: RIGHT_GUTTER,
    grid: { show: false },
    ticks: { show: false },
    // No splits: it shows none, and uPlot's own log splits throw "Invalid array length" on a
    // degenerate log range (the Explorer heatmap's RangeError).
    splits: () => [],
    values: (_u, splits) => splits.map(() => ''),
  };
}

/**
 * Shared cursor between charts of one page, without sharing drags: a drag on
 * one chart is one zoom, not one per chart.
 */
export function cursorSync(key: string | undefined): uPlot.Cursor['sync'] {
  if (!key) return undefined;
  return {
    key,
    filters: {
      pub: (type: string) => type !== 'mousedown' && type !== 'mouseup' && type !== 'dblclick',
    },
  };
}
