import { Link } from 'react-router-dom';
import type { Deploy, Regression, Series, Slo, Suspect } from '@onset/contract';
import { linkWithGlobals, useUrlState } from '../../state/url.ts';
import { formatAgo, formatInstant } from '../../state/timeRange.ts';
import {
  formatChange,
  formatCount,
  formatDelta,
  formatLatencyMs,
  formatPercent,
} from '../../lib/format.ts';
import { KindBadge } from '../../components/Controls.tsx';
import { hostsText } from '../../components/graphs/markerData.ts';
import { relativeToOnset, suspectText } from '../../components/Suspects.tsx';
import { BudgetBar, SloAlertPill, SloBurn } from '../../components/SloParts.tsx';

/** Above the fold: how much, since when, the top suspect, who is affected, and the SLO burn. */
export function RegressionFacts({
  r,
  onsetMs,
  top,
  topDeploy,
  series,
  matchingSlos,
}: {
  r: Regression;
  onsetMs: number;
  top: Suspect | undefined;
  topDeploy: Deploy | undefined;
  series: Series | undefined;
  matchingSlos: Slo[];
}) {
  const { params } = useUrlState();
  return (
    <section className="facts" aria-label="What happened">
      <div className="fact">
        <div className="fact-label">How much</div>
        <div className="fact-value" data-testid="change-p50">
          <span className="muted small">p50</span>{' '}
          {formatChange(r.before.p50_ms, r.after.p50_ms, r.ratio_p50)}
        </div>
        <div className="fact-value" data-testid="change-p99">
          <span className="muted small">p99</span>{' '}
          {formatChange(r.before.p99_ms, r.after.p99_ms, r.ratio_p99)}
        </div>
        <div className="muted small">
          {formatDelta(r.before.p50_ms, r.after.p50_ms)} at the median ·{' '}
          {formatCount(r.before.count)} calls before, {formatCount(r.after.count)} after
        </div>
        {r.series_levels ? (
          <div className="muted small" data-testid="series-levels">
            {r.cohort ? `${r.cohort.attribute} ${r.cohort.slow.join(', ')} hosts; ` : ''}
            whole series p50{' '}
            {formatChange(
              r.series_levels.before.p50_ms,
              r.series_levels.after.p50_ms,
              r.series_levels.ratio_p50,
            )}
            , p99{' '}
            {formatChange(
              r.series_levels.before.p99_ms,
              r.series_levels.after.p99_ms,
              r.series_levels.ratio_p99,
            )}
          </div>
        ) : null}
      </div>
      <div className="fact">
        <div className="fact-label">Since</div>
        <div className="fact-value">{formatInstant(onsetMs)}</div>
        <div className="muted small">
          {formatAgo(onsetMs, Date.now())}
          {r.detected_at ? ` · detected ${formatAgo(Date.parse(r.detected_at), Date.now())}` : ''}
        </div>
      </div>
      <div className="fact fact-suspect">
        <div className="fact-label">Top suspect</div>
        {top ? (
          <>
            <div className="fact-value">
              <KindBadge kind={top.kind} /> {suspectText(top, topDeploy)}
            </div>
            <div className="small">{top.reason}</div>
            <div className="muted small">
              score {formatPercent(top.score, 0)}
              {top.at || topDeploy
                ? ` · ${relativeToOnset(Date.parse((top.at ?? topDeploy?.at)!), onsetMs)}`
                : ''}
            </div>
          </>
        ) : (
          <div className="fact-value muted">No deploy explains it</div>
        )}
      </div>
      <div className="fact">
        <div className="fact-label">Affected</div>
        {r.cohort ? (
          <div className="fact-value" data-testid="affected-cohort">
            {r.cohort.attribute} <b className="mono">{r.cohort.slow.join(', ')}</b>
            {r.cohort.slow_hosts?.length ? (
              <div className="small">hosts {hostsText(r.cohort.slow_hosts)}</div>
            ) : null}
            <div className="muted small">
              not {r.cohort.fast.join(', ')}
              {r.cohort.fast_hosts?.length ? ` (${hostsText(r.cohort.fast_hosts)})` : ''}
            </div>
            {r.cohort.levels ? (
              <div className="muted small" data-testid="cohort-levels">
                slow p50 {formatLatencyMs(r.cohort.levels.slow.before.p50_ms)} →{' '}
                {formatLatencyMs(r.cohort.levels.slow.after.p50_ms)} · fast p50{' '}
                {formatLatencyMs(r.cohort.levels.fast.before.p50_ms)} →{' '}
                {formatLatencyMs(r.cohort.levels.fast.after.p50_ms)}
              </div>
            ) : null}
          </div>
        ) : (
          <div className="fact-value">
            {r.host
              ? `host ${r.host}`
              : series?.hosts.length
                ? hostsText(series.hosts)
                : 'all hosts'}
          </div>
        )}
      </div>
      <div className="fact">
        <div className="fact-label">SLO burn</div>
        {matchingSlos.length ? (
          matchingSlos.slice(0, 2).map((s) => (
            <div key={s.id} className="fact-slo">
              <Link to={linkWithGlobals(`/slos/${s.id}`, params, { from: null, to: null })}>
                {s.name}
              </Link>{' '}
              <BudgetBar value={s.status?.budget_remaining ?? null} />{' '}
              <span className="muted small">1h</span> <SloBurn slo={s} window="1h" />
              <SloAlertPill slo={s} />
            </div>
          ))
        ) : (
          <div className="fact-value muted">
            No SLO covers this series.{' '}
            {series ? (
              <Link
                to={linkWithGlobals('/slos', params, { create: series.id, from: null, to: null })}
              >
                Create one
              </Link>
            ) : null}
          </div>
        )}
      </div>
    </section>
  );
}
