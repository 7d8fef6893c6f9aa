/** The cohort split: one line per value of a host attribute, from the grouped read (GET /series/{id}/groups). */
import { useMemo } from 'react';
import { useCohorts, useSeriesGroups } from '../explorer/api.ts';
import { useUrlState } from '../../state/url.ts';
import {
  MAX_COHORT_LINES,
  shapeCohorts,
  splitCandidates,
} from '../../components/graphs/cohortData.ts';
import {
  BREAKDOWN_CHART_HEIGHT,
  BreakdownChart,
  type PageChartContext,
} from '../../components/graphs/BreakdownChart.tsx';
import { hostsText } from '../../components/graphs/markerData.ts';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { QuantileToggle, Select } from '../../components/Controls.tsx';
import { formatLatencyMs, formatRatio } from '../../lib/format.ts';

/** What the grouped read calls null: hosts that do not report the attribute (core's name for it). */
const UNSET = '(unset)';
const valueOf = (v: string | null) => v ?? UNSET;

export function CohortPanel({
  sources,
  hint,
  ...page
}: PageChartContext & {
  /** Series whose hosts can be split, e.g. the caller's client series and the edge's gap series (callee hosts). */
  sources: ReadonlyArray<{ id: string; label: string }>;
  /** The regression engine's cohort verdict, if any. */
  hint?: { attribute: string; slow: string[]; fast: string[] } | null;
}) {
  const { range, scale, onsetMs } = page;
  const { get, set } = useUrlState();
  const cohortQueries = useCohorts(sources.map((src) => src.id));
  // Default: the first source that has something to split (the callee's hosts for a caller-only change).
  const firstSplittable = sources.findIndex(
    (_, i) => splitCandidates(cohortQueries[i]?.data).length > 0,
  );
  const chosen = sources.findIndex((src) => src.id === get('cseries'));
  const sourceIdx = chosen >= 0 ? chosen : hint ? 0 : Math.max(0, firstSplittable);
  const seriesId = sources[sourceIdx]?.id ?? sources[0]!.id;
  const cohorts = cohortQueries[sourceIdx] ?? cohortQueries[0]!;
  const activeHint = sourceIdx === 0 ? hint : null;
  const candidates = useMemo(() => {
    const keys = splitCandidates(cohorts.data);
    if (activeHint?.attribute && !keys.includes(activeHint.attribute))
      keys.unshift(activeHint.attribute);
    return keys;
  }, [cohorts.data, activeHint?.attribute]);
  const key = get('cohort') || activeHint?.attribute || candidates[0] || '';
  const q = get('cq') === '0.99' ? '0.99' : '0.5';
  // One read for every value (the server merges each value's hosts), the verdict's values first.
  const groups = useSeriesGroups(seriesId, key, range, undefined, 20);
  // The previous key's answer stays while the next loads: never shown under the new key.
  const g = groups.data?.by === key ? groups.data : undefined;
  const slowOfHint = activeHint && activeHint.attribute === key ? activeHint.slow : undefined;
  const shaped = useMemo(() => {
    if (!g) return null;
    const byValue = new Map(g.groups.map((x) => [valueOf(x.value), x]));
    const fromHint =
      activeHint && activeHint.attribute === key ? [...activeHint.slow, ...activeHint.fast] : [];
    const order = [...new Set([...fromHint, ...byValue.keys()])]
      .filter((v) => byValue.has(v))
      .slice(0, MAX_COHORT_LINES);
    if (!order.length) return null;
    return {
      ...shapeCohorts(
        order.map((v) => ({
          value: v,
          resp: { step_ms: g.step_ms, columns: byValue.get(v)!.columns },
        })),
        q,
        { onsetMs, slow: slowOfHint, dropNonPositive: scale === 'log' },
      ),
      hosts: new Map(order.map((v) => [v, byValue.get(v)!.hosts])),
    };
  }, [g, q, onsetMs, activeHint, key, slowOfHint, scale]);
  const hostsOf = (v: string) => shaped?.hosts.get(v) ?? [];

  if (cohorts.error && !activeHint)
    return <ErrorState error={cohorts.error} what="cohort attributes" />;
  if (!key)
    return cohorts.data ? (
      <Empty title="One cohort only">
        Every host reporting this series has the same kernel, versions and dependencies, so there is
        nothing to split by. Hosts send cohort attributes as resource attributes (
        <code>os.version</code>, <code>service.version</code>, <code>dependency.*</code>).
      </Empty>
    ) : (
      <Loading label="Loading cohorts…" height={BREAKDOWN_CHART_HEIGHT} />
    );

  return (
    <div className="cohort-panel" data-testid="cohort-panel">
      <div className="row gap wrap">
        {sources.length > 1 ? (
          <Select
            label="Hosts of"
            value={seriesId}
            options={sources.map((src) => ({ value: src.id, label: src.label }))}
            onChange={(v) => set({ cseries: v, cohort: null })}
            id="cohort-series"
          />
        ) : null}
        <Select
          label="Split by"
          value={key}
          options={candidates.length ? candidates : [key]}
          onChange={(v) => set({ cohort: v })}
          id="cohort-key"
        />
        <QuantileToggle
          label="Quantile per cohort"
          value={q}
          onChange={(x) => set({ cq: x === '0.5' ? null : x })}
        />
      </div>
      {groups.error ? <ErrorState error={groups.error} what="cohort quantiles" /> : null}
      {shaped ? (
        <>
          <ul className="cohort-summary" aria-label={`Latency by ${key}`}>
            {shaped.summary.map((c) => (
              <li key={c.value} className={c.slow ? 'slow' : ''} data-cohort={c.value}>
                <i className={`swatch line-${c.color}`} aria-hidden="true" />
                <span className="mono">
                  {key}={c.value}
                </span>{' '}
                {c.slow ? (
                  <span className="slow-tag">slow</span>
                ) : (
                  <span className="fast-tag">ok</span>
                )}{' '}
                <span className="muted">
                  {c.beforeMs !== null
                    ? `${formatLatencyMs(c.beforeMs)} → `
                    : onsetMs !== undefined
                      ? 'new since onset: '
                      : ''}
                  {c.afterMs !== null ? formatLatencyMs(c.afterMs) : '–'}
                  {c.ratio !== null && c.ratio >= 1.5 ? ` (${formatRatio(c.ratio)})` : ''}
                </span>
                {hostsOf(c.value).length ? (
                  <span className="muted small"> · {hostsText(hostsOf(c.value))}</span>
                ) : null}
              </li>
            ))}
          </ul>
          <BreakdownChart
            page={page}
            frame={shaped.frame}
            chartId="cohorts"
            title={`p${Number(q) * 100} latency per ${key}: ${shaped.summary.map((c) => `${c.value}${c.slow ? ' (slow)' : ''}`).join(', ')}`}
          />
        </>
      ) : g ? (
        <Empty title={`No values of ${key} reported`}>
          Hosts feeding this series do not report {key}.
        </Empty>
      ) : groups.error ? null : (
        <Loading label="Loading cohorts…" height={BREAKDOWN_CHART_HEIGHT + 60} />
      )}
    </div>
  );
}
