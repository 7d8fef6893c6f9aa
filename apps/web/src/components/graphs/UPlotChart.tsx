/**
 * A thin React owner for one uPlot instance: creates it when the options
 * change, feeds new data with setData, follows the container's width, and
 * re-renders DOM overlays (marker chips, level bands) whenever the plot's
 * geometry changes. Height is fixed so nothing jumps when data arrives.
 */
import { useEffect, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { timeZoneMode } from '../../lib/time.ts';

const utcDate = (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');

export interface UPlotChartProps {
  options: Omit<uPlot.Options, 'width' | 'height'>;
  data: uPlot.AlignedData;
  height: number;
  /** DOM drawn over the plot, positioned with the live instance (valToPos). */
  overlay?: (u: uPlot) => ReactNode;
  /** Name used in performance marks (`onset:painted:<id>`), read by bench/ui. */
  chartId?: string;
  /** When it changes (and options and data did not), rescale and redraw in place. */
  redrawKey?: string;
  className?: string;
}

export function UPlotChart({
  options,
  data,
  height,
  overlay,
  chartId,
  className,
  redrawKey,
}: UPlotChartProps) {
  const hostRef = useRef<HTMLDivElement>(null);
  const plotRef = useRef<uPlot | null>(null);
  const dataRef = useRef(data);
  dataRef.current = data;
  /** The data the live instance shows, so a re-creation is not followed by a redundant setData. */
  const plotDataRef = useRef<uPlot.AlignedData | null>(null);
  /** setData ran in this commit already (it rescales and redraws). */
  const justSet = useRef(false);
  const [plot, setPlot] = useState<uPlot | null>(null);
  const [, setGeometry] = useState(0);

  // (Re)create on new options. Layout effect: the chart is on screen in the same frame as the DOM.
  useLayoutEffect(() => {
    const host = hostRef.current!;
    const width = Math.max(200, host.clientWidth);
    const bump = () => setGeometry((g) => g + 1);
    const painted = (u: uPlot) => {
      if (!chartId) return;
      performance.mark(`onset:drawn:${chartId}`);
      requestAnimationFrame(() => {
        if (plotRef.current === u) performance.mark(`onset:painted:${chartId}`);
      });
    };
    const hooks: uPlot.Hooks.Arrays = {
      ...options.hooks,
      setSize: [...(options.hooks?.setSize ?? []), bump],
      setScale: [...(options.hooks?.setScale ?? []), bump],
      draw: [...(options.hooks?.draw ?? []), painted],
    };
    // Axes follow the UI's zone toggle (the page re-mounts when it flips).
    const tzDate = timeZoneMode() === 'utc' ? utcDate : undefined;
    const u = new uPlot({ tzDate, ...options, hooks, width, height }, dataRef.current, host);
    plotRef.current = u;
    plotDataRef.current = dataRef.current;
    setPlot(u);
    return () => {
      plotRef.current = null;
      u.destroy();
    };
  }, [options, height, chartId]);

  // New data for the same chart: no re-creation, uPlot redraws in place.
  useLayoutEffect(() => {
    if (!plotRef.current || plotDataRef.current === data) return;
    plotDataRef.current = data;
    plotRef.current.setData(data);
    justSet.current = true;
  }, [data]);

  const lastRedrawKey = useRef(redrawKey);
  useLayoutEffect(() => {
    const fresh = justSet.current;
    justSet.current = false;
    if (lastRedrawKey.current === redrawKey) return;
    lastRedrawKey.current = redrawKey;
    const u = plotRef.current;
    if (u && !fresh) u.setData(u.data);
  }, [redrawKey]);

  useEffect(() => {
    const host = hostRef.current!;
    const ro = new ResizeObserver(() => {
      const u = plotRef.current;
      const w = Math.max(200, host.clientWidth);
      if (u && Math.abs(u.width - w) > 1) u.setSize({ width: w, height });
    });
    ro.observe(host);
    return () => ro.disconnect();
  }, [height]);

  return (
    <div className={`chart-host ${className ?? ''}`} style={{ height }}>
      <div ref={hostRef} className="chart-canvas" />
      {plot ? (
        <div className="chart-overlay">
          {/* The plot area (inside the axes), for overlays and tests. */}
          <div
            className="plot-area"
            data-testid="plot-area"
            style={plotBox(plot)}
            aria-hidden="true"
          />
          {overlay?.(plot)}
        </div>
      ) : null}
    </div>
  );
}

/** The plot area in CSS pixels, relative to the chart's top-left corner. */
export function plotBox(u: uPlot): { left: number; top: number; width: number; height: number } {
  const px = uPlot.pxRatio;
  return {
    left: u.bbox.left / px,
    top: u.bbox.top / px,
    width: u.bbox.width / px,
    height: u.bbox.height / px,
  };
}
