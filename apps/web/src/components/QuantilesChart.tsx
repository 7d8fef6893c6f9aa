/** The quantiles chart of one series, with its loading and error states. */
import { ChartOrState } from './States.tsx';
import { LatencyChart, type LatencyChartProps } from './graphs/LatencyChart.tsx';

/**
 * A LatencyChart of a series' quantiles once `frame` is shaped; until then the
 * quantiles query's error (with Retry) or a spinner, at the chart's height.
 */
export function QuantilesChart({
  frame,
  query,
  height,
  ...chart
}: Omit<LatencyChartProps, 'frame' | 'height'> & {
  frame: LatencyChartProps['frame'] | null;
  query: { error: unknown; refetch: () => unknown };
  height: number;
}) {
  return (
    <ChartOrState
      data={frame}
      query={query}
      what="quantiles"
      loadingLabel="Loading quantiles…"
      height={height}
    >
      {(shaped) => <LatencyChart frame={shaped} height={height} {...chart} />}
    </ChartOrState>
  );
}
