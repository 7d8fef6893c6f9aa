/** A latency chart that splits the page's series into lines (per cohort, per edge view). */
import type { RangeText } from '../../state/timeRange.ts';
import type { LevelBand } from './ChartOverlay.tsx';
import { LatencyChart, type LatencyChartProps } from './LatencyChart.tsx';
import type { ChartMarker } from './markerData.ts';

export const BREAKDOWN_CHART_HEIGHT = 280;

/** What a breakdown panel takes from its page so its chart lines up with the page's main chart. */
export interface PageChartContext {
  range: RangeText;
  resolved: { fromMs: number; toMs: number };
  scale: 'log' | 'linear';
  markers: readonly ChartMarker[];
  onsetMs?: number;
  onZoom?: (a: number, b: number) => void;
}

/** One line per cohort or view, without count bars, on the page's window, scale, markers and onset. */
export function BreakdownChart({
  page,
  frame,
  bands,
  chartId,
  title,
}: {
  page: PageChartContext;
  frame: LatencyChartProps['frame'];
  bands?: readonly LevelBand[];
  chartId: string;
  title: string;
}) {
  return (
    <LatencyChart
      frame={frame}
      scale={page.scale}
      range={page.resolved}
      height={BREAKDOWN_CHART_HEIGHT}
      markers={page.markers}
      onsetSec={page.onsetMs !== undefined ? page.onsetMs / 1000 : undefined}
      onZoom={page.onZoom}
      bands={bands}
      showCount={false}
      chartId={chartId}
      title={title}
    />
  );
}
