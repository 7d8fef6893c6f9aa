/**
 * "Group by": the shown series as one line per host, service.version,
 * os.version or any cohort attribute its hosts report, from
 * `GET /api/v1/series/{id}/groups` (the server merges each group's
 * histograms; nothing is recomputed here), with each group's hosts, calls and
 * latest p50/p99 as the API answered them.
 */
import { useMemo } from 'react';
import type { SeriesGroups } from '@onset/contract';
import { useCohorts, useSeriesGroups } from './api.ts';
import { useUrlState } from '../../state/url.ts';
import { formatLatencyMs } from '../../lib/format.ts';
import { hostsText } from '../../components/graphs/markerData.ts';
import { alignLines, type LineColor } from '../../components/graphs/latencyFrame.ts';
import { timedValues } from '../../components/graphs/quantileData.ts';
import {
  BREAKDOWN_CHART_HEIGHT,
  BreakdownChart,
  type PageChartContext,
} from '../../components/graphs/BreakdownChart.tsx';
import { ErrorState, Loading } from '../../components/States.tsx';
import { Panel, QuantileToggle, Select } from '../../components/Controls.tsx';

/** Always offered; the series' own cohort attributes are added after them. */
const FIXED = ['host', 'service.version', 'os.version'];

const groupName = (v: string | null) => v ?? '(not reported)';

function lastOf(values: readonly number[] | undefined): number | null {
  return values && values.length ? values[values.length - 1]! : null;
}

/** One line per group for quantile `q`, coloured c0… in the API's order (most calls first). */
export function shapeGroups(g: SeriesGroups, q: string, dropNonPositive: boolean) {
  return alignLines(
    g.groups.map((x, k) => ({
      key: `${k}:${x.value ?? ''}`,
      label: groupName(x.value),
      color: `c${k}` as LineColor,
      width: 1.75,
      points: timedValues(x.columns, q, { dropNonPositive }),
    })),
    g.step_ms,
  );
}

export function GroupByPanel({
  seriesId,
  step,
  host,
  page,
}: {
  seriesId: string;
  step?: string;
  /** The Explorer's host filter: only that host's calls are grouped. */
  host?: string;
  page: PageChartContext;
}) {
  const { get, set } = useUrlState();
  const by = get('group');
  const q = get('gq') === '0.99' ? '0.99' : '0.5';
  const [cohorts] = useCohorts([seriesId]);
  const keys = useMemo(() => {
    const own = (cohorts?.data?.attributes ?? []).map((a) => a.key).sort();
    return [...new Set([...FIXED, ...own, ...(by ? [by] : [])])];
  }, [cohorts?.data, by]);
  const groups = useSeriesGroups(seriesId, by, page.range, step, 8, host);
  const g = groups.data;
  const frame = useMemo(
    () => (g ? shapeGroups(g, q, page.scale === 'log') : null),
    [g, q, page.scale],
  );
  return (
    <Panel title="Group by host, version or cohort attribute">
      <div className="row gap wrap">
        <Select
          label="Group by"
          id="group-by"
          value={by}
          options={keys}
          allLabel="No grouping"
          onChange={(v) => set({ group: v || null })}
        />
        {by ? (
          <QuantileToggle
            label="Quantile per group"
            value={q}
            onChange={(x) => set({ gq: x === '0.5' ? null : x })}
          />
        ) : null}
      </div>
      {!by ? (
        <p className="muted small">
          One line per host, <code>service.version</code>, <code>os.version</code> or any other
          attribute the hosts of this series report{host ? ` (host ${host}'s calls only)` : ''}.
        </p>
      ) : groups.error ? (
        <ErrorState error={groups.error} what="the groups" onRetry={() => groups.refetch()} />
      ) : !g || !frame ? (
        <Loading label="Loading the groups…" height={BREAKDOWN_CHART_HEIGHT + 60} />
      ) : (
        <div data-testid="group-by-panel" data-by={g.by} data-host={g.host ?? ''}>
          {g.host ? (
            <p className="muted small" data-testid="group-by-host">
              Host {g.host}&apos;s calls only (the host filter above).
            </p>
          ) : null}
          <ul className="cohort-summary" aria-label={`Latency by ${g.by}`}>
            {g.groups.map((x, k) => (
              <li key={`${k}:${x.value ?? ''}`} data-group={x.value ?? ''}>
                <i className={`swatch line-c${k}`} aria-hidden="true" />
                <span className="mono">
                  {g.by}={groupName(x.value)}
                </span>{' '}
                <span className="muted">
                  <span data-testid="group-calls">{x.count.toLocaleString('en-US')}</span> calls ·
                  last p50{' '}
                  <b data-testid="group-p50">
                    {lastOf(x.columns.q['0.5']) === null
                      ? '–'
                      : formatLatencyMs(lastOf(x.columns.q['0.5'])!)}
                  </b>{' '}
                  · p99{' '}
                  <b data-testid="group-p99">
                    {lastOf(x.columns.q['0.99']) === null
                      ? '–'
                      : formatLatencyMs(lastOf(x.columns.q['0.99'])!)}
                  </b>
                </span>
                {g.by !== 'host' && x.hosts.length ? (
                  <span className="muted small"> · {hostsText(x.hosts)}</span>
                ) : null}
              </li>
            ))}
          </ul>
          {g.total_groups > g.groups.length ? (
            <p className="muted small" role="note" data-testid="group-by-cut">
              The {g.groups.length} groups with the most calls of {g.total_groups}.
            </p>
          ) : null}
          <BreakdownChart
            page={page}
            frame={frame}
            chartId="groups"
            title={`p${Number(q) * 100} latency per ${g.by}: ${g.groups.map((x) => groupName(x.value)).join(', ')}`}
          />
        </div>
      )}
    </Panel>
  );
}
