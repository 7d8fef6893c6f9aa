/**
 * A cohort regression's main chart data (regression page and alert page): the
 * slow hosts' and the fast hosts' lines from the server, each side's levels
 * over its own line, and a line saying which hosts and values each side is.
 */
import { useMemo } from 'react';
import type { Cohort, QuantileColumns, Regression, RegressionCohortLines } from '@onset/contract';
import { hostsText } from '../../components/graphs/markerData.ts';
import type { LevelBand } from '../../components/graphs/ChartOverlay.tsx';
import type { LatencyFrame } from '../../components/graphs/latencyFrame.ts';
import { useRegressionCohort } from './api.ts';
import { cohortBands, shapeCohortLines } from './cohortLines.ts';

export interface CohortSplit {
  frame: LatencyFrame | null;
  bands: LevelBand[];
  query: { data: unknown; error: unknown; refetch: () => unknown };
  lines: RegressionCohortLines | undefined;
}

/** null when the regression has no cohort (the page draws the whole series as before). */
export function useCohortSplit(
  r: Regression | undefined,
  range: { from: string; to: string },
  whole: { step_ms: number; columns: QuantileColumns } | undefined,
  window: { fromMs: number; toMs: number },
  scale: 'log' | 'linear',
): CohortSplit | null {
  const has = !!r?.cohort && r.cohort.slow_hosts.length > 0 && r.cohort.fast_hosts.length > 0;
  const q = useRegressionCohort(r?.id ?? '', range, has);
  const lines = q.data;
  const onsetMs = r ? Date.parse(r.onset) : 0;
  const frame = useMemo(
    () =>
      lines && lines.sides.length
        ? shapeCohortLines(lines, whole, { dropNonPositive: scale === 'log' })
        : null,
    [lines, whole, scale],
  );
  const bands = useMemo(
    () => (lines ? cohortBands(lines, window, onsetMs) : []),
    [lines, window, onsetMs],
  );
  if (!has) return null;
  return { frame, bands, query: q, lines };
}

/**
 * "Split by os.version: slow 4.15.0-36 (node-3, node-4) · fast 4.4.0-138 (node-1, node-2)",
 * from the regression's own cohort (known at once: the chart below does not move when it loads).
 */
export function CohortSplitNote({ cohort }: { cohort: Cohort }) {
  const sides = [
    { side: 'slow', values: cohort.slow, hosts: cohort.slow_hosts },
    { side: 'fast', values: cohort.fast, hosts: cohort.fast_hosts },
  ];
  return (
    <p className="muted small cohort-split-note" data-testid="cohort-split-note">
      Split by <span className="mono">{cohort.attribute}</span>:{' '}
      {sides.map((s, i) => (
        <span key={s.side} data-side={s.side}>
          {i ? ' · ' : ''}
          <b className={s.side === 'slow' ? 'slow-tag' : 'fast-tag'}>{s.side}</b>{' '}
          {cohort.attribute !== 'host.name' ? (
            <span className="mono">{s.values.join(', ')}</span>
          ) : null}{' '}
          ({hostsText(s.hosts)})
        </span>
      ))}
      ; each side&apos;s levels are shaded over its own line, the faint dashed line is every
      host&apos;s p50.
    </p>
  );
}
