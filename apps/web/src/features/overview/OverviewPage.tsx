/** Overview: open regressions ranked by severity, SLOs burning, the latest deploy markers. */
import { Link } from 'react-router-dom';
import { useAlerts } from '../alerts/api.ts';
import { useDeploys } from '../deploys/api.ts';
import { useRegressions } from '../regressions/api.ts';
import { useSlos } from '../slos/api.ts';
import { PagingBadge } from '../../components/Delivery.tsx';
import { SilenceNote } from '../../components/SilenceNote.tsx';
import type { Alert, Regression, Slo } from '@onset/contract';
import { headlineQuantile, rankRegressions, severityLevel } from '../../lib/severity.ts';
import { useSloWatching } from '../slos/api.ts';
import { edgeLabel, formatChange, formatPercent } from '../../lib/format.ts';
import {
  describeRange,
  formatAgo,
  formatInstant,
  resolveRange,
  zoomRange,
} from '../../state/timeRange.ts';
import { useMemo } from 'react';
import { ArrivingPanel } from './ArrivingPanel.tsx';
import { linkWithGlobals, useRange, useUrlState } from '../../state/url.ts';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { KindBadge, Panel } from '../../components/Controls.tsx';
import { CardinalityNotice } from './CardinalityNotice.tsx';
import { DeployFeed } from '../../components/DeployList.tsx';
import { SeverityDot, SeverityLegend } from '../../components/Severity.tsx';
import { ShapeTag } from '../../components/ShapeTag.tsx';
import { versionText } from '../../components/graphs/markerData.ts';
import { SloNameCell, SloStatusCells } from '../../components/SloParts.tsx';
import { burningSlos } from '../../lib/slos.ts';

/** Burn windows the Overview's SLO table shows: the two that page. */
const OVERVIEW_BURN_WINDOWS = ['1h', '6h'] as const;

export default function OverviewPage() {
  const { params } = useUrlState();
  const [range, setRange] = useRange();
  const now = Date.now();
  const { fromMs, toMs } = resolveRange(range, now);
  const rangeLabel = describeRange(range, now);
  // Open and acknowledged: acknowledged ones are still ongoing, someone is on them.
  const active = useRegressions({ status: 'active' });
  // Whether each regression's page reached anyone (the server's delivery truth).
  const alerts = useAlerts({ type: 'regression', status: 'firing', limit: 1000 });
  // A regression whose alert pages is pinned to the list at any range: an incident that pages
  // is never folded into "started before this range".
  const paging = useMemo(
    () =>
      new Set((alerts.data ?? []).filter((a) => a.severity === 'page').map((a) => a.regression_id)),
    [alerts.data],
  );
  // The range picks the regressions whose onset falls in it; older ongoing ones are counted
  // (never silently hidden) with a way to widen the range to them.
  const inRange = useMemo(
    () =>
      active.data?.filter((r) => {
        const t = Date.parse(r.onset);
        return (t >= fromMs && t <= toMs) || paging.has(r.id);
      }),
    [active.data, fromMs, toMs, paging],
  );
  const earlier = (active.data ?? []).filter(
    (r) => Date.parse(r.onset) < fromMs && !paging.has(r.id),
  );
  const pinned = (inRange ?? []).filter((r) => {
    const t = Date.parse(r.onset);
    return !(t >= fromMs && t <= toMs);
  }).length;
  const regressions = { ...active, data: inRange };
  const slos = useSlos();
  const deploys = useDeploys({ from: range.from, to: range.to });
  const sloList = slos.data ?? [];
  const watching = useSloWatching((regressions.data ?? []).map((r) => r.series_id));
  // The list is drawn once what ranks its rows (SLOs and their membership) and what each row
  // says about paging are in, so rows neither reorder nor grow under the reader's eyes; the
  // panels below it wait for the list, so its arrival does not push them down either.
  const settled = (q: { data?: unknown; isError: boolean }) => q.data !== undefined || q.isError;
  const listReady = settled(regressions) && settled(slos) && settled(alerts) && watching.settled;
  const belowReady = listReady && settled(deploys);
  const earliest = earlier.length ? Math.min(...earlier.map((r) => Date.parse(r.onset))) : 0;
  const earlierNote = earlier.length ? (
    <p className="earlier-note" data-testid="earlier-regressions">
      {earlier.length} open {earlier.length === 1 ? 'regression' : 'regressions'} started before
      this range.{' '}
      <button
        type="button"
        className="btn link"
        onClick={() => setRange(zoomRange(earliest - 3_600_000, Date.now()))}
      >
        Widen the range to show {earlier.length === 1 ? 'it' : 'them'}
      </button>
    </p>
  ) : null;

  return (
    <div className="page">
      <div className="page-head">
        <h1>Overview</h1>
      </div>
      <CardinalityNotice />
      <Panel
        title={`Open regressions begun in ${rangeLabel.replace(/^Last /, 'the last ')}${regressions.data ? ` (${regressions.data.length - pinned})` : ''}${pinned ? `, and ${pinned} paging since before it` : ''}`}
        id="regressions-head"
      >
        {regressions.data === undefined || !listReady ? (
          regressions.error ? (
            <ErrorState
              error={regressions.error}
              what="regressions"
              onRetry={() => regressions.refetch()}
            />
          ) : (
            <Loading label="Loading regressions…" height={120} />
          )
        ) : regressions.data.length === 0 ? (
          <>
            <Empty
              title={earlier.length ? 'No regression began in this range' : 'No open regression'}
            >
              Onset compares every latency series with its own recent past and opens a regression on
              a lasting step change.{earlier.length ? '' : ' Nothing is regressed now.'}
            </Empty>
            {earlierNote}
          </>
        ) : (
          <>
            {earlierNote}
            <RegressionList
              items={rankRegressions(regressions.data, sloList, watching.watching)}
              alerts={alerts.data ?? []}
              params={params}
              now={now}
              fromMs={fromMs}
            />
          </>
        )}
      </Panel>
      {belowReady && regressions.data?.length === 0 ? (
        <ArrivingPanel range={range} params={params} rangeLabel={rangeLabel} />
      ) : null}

      {belowReady ? (
        <div className="grid-2">
          <Panel
            title="SLOs burning"
            actions={
              <Link className="btn" to={linkWithGlobals('/slos', params)}>
                All SLOs
              </Link>
            }
          >
            {slos.data === undefined ? (
              slos.error ? (
                <ErrorState error={slos.error} what="SLOs" onRetry={() => slos.refetch()} />
              ) : (
                <Loading label="Loading SLOs…" height={120} />
              )
            ) : (
              <BurningSlos slos={slos.data} params={params} />
            )}
          </Panel>
          <Panel
            title={`Deploy markers (${rangeLabel.toLowerCase()})`}
            actions={
              <Link className="btn" to={linkWithGlobals('/deploys', params)}>
                All deploys
              </Link>
            }
          >
            {deploys.data === undefined ? (
              deploys.error ? (
                <ErrorState
                  error={deploys.error}
                  what="deploy markers"
                  onRetry={() => deploys.refetch()}
                />
              ) : (
                <Loading label="Loading deploy markers…" height={120} />
              )
            ) : deploys.data.length === 0 ? (
              <Empty title="No deploy markers in this range">
                CI sends them with <code>POST /api/v1/deploys</code> or <code>onset deploy</code>.
              </Empty>
            ) : (
              <DeployFeed
                deploys={[...deploys.data]
                  .sort((a, b) => Date.parse(b.at) - Date.parse(a.at))
                  .slice(0, 10)}
              />
            )}
          </Panel>
        </div>
      ) : null}
      {belowReady && regressions.data?.length ? (
        <ArrivingPanel range={range} params={params} rangeLabel={rangeLabel} />
      ) : null}
    </div>
  );
}

function RegressionList({
  items,
  alerts,
  params,
  now,
  fromMs,
}: {
  items: Array<{ r: Regression; score: number }>;
  alerts: readonly Alert[];
  params: URLSearchParams;
  now: number;
  /** The range's start: a row begun before it is here because it pages (pinned). */
  fromMs: number;
}) {
  const max = items[0]?.score ?? 0;
  const alertOf = new Map(alerts.map((a) => [a.regression_id, a]));
  return (
    <>
      <SeverityLegend />
      <ol className="regression-list">
        {items.map(({ r, score }) => {
          const q = headlineQuantile(r);
          const before = q === 'p99' ? r.before.p99_ms : r.before.p50_ms;
          const after = q === 'p99' ? r.after.p99_ms : r.after.p50_ms;
          const ratio = q === 'p99' ? r.ratio_p99 : r.ratio_p50;
          const top = r.suspects?.[0];
          const level = severityLevel(score, max);
          const pinned = Date.parse(r.onset) < fromMs;
          return (
            <li
              key={r.id}
              className={`regression-row sev-${level}`}
              data-regression-id={r.id}
              data-pinned={pinned ? 'paging' : undefined}
            >
              <Link
                to={linkWithGlobals(`/regressions/${encodeURIComponent(r.id)}`, params, {
                  from: null,
                  to: null,
                })}
                className="regression-link"
              >
                <SeverityDot
                  level={level}
                  title={`${level} severity (score ${score.toFixed(1)}: ratio × traffic × SLO impact)`}
                />
                <span className="regression-what">
                  <span className="regression-title">
                    <span className="op-tag">{r.op}</span> <b className="mono">{r.name}</b>
                    {r.status === 'acknowledged' ? (
                      <span className="status-pill status-acknowledged">acked</span>
                    ) : null}
                    {pinned ? (
                      <span
                        className="status-pill status-open"
                        data-testid="pinned-paging"
                        title="Begun before this range; shown because its alert pages"
                      >
                        paging
                      </span>
                    ) : null}
                    <ShapeTag r={r} />
                  </span>
                  <span className="regression-where">
                    {edgeLabel(r)} · <span className={`view-tag view-${r.view}`}>{r.view}</span>
                    {r.members.length > 1 ? (
                      <span title={memberTitle(r)}> · on {r.members.length} series</span>
                    ) : null}
                    {r.host ? <> · host {r.host}</> : null}
                    {r.cohort ? (
                      <>
                        {' '}
                        · only {r.cohort.attribute} {r.cohort.slow.join(', ')}
                      </>
                    ) : null}
                    {alertOf.get(r.id) ? (
                      <>
                        {' '}
                        · <PagingBadge alert={alertOf.get(r.id)!} />
                      </>
                    ) : null}
                    {r.silence ? (
                      <>
                        {' '}
                        · <SilenceNote s={r.silence} compact />
                      </>
                    ) : null}
                  </span>
                </span>
                <span className="regression-change">
                  <span className="muted small">{q}</span>{' '}
                  <b>{formatChange(before, after, ratio)}</b>
                </span>
                <span className="regression-onset" title={new Date(r.onset).toISOString()}>
                  since {formatInstant(Date.parse(r.onset))}
                  <span className="muted small"> ({formatAgo(Date.parse(r.onset), now)})</span>
                </span>
                <span className="regression-suspect">
                  {top ? (
                    <>
                      <KindBadge kind={top.kind} />{' '}
                      {[top.service, versionText(top)].filter(Boolean).join(' ')}{' '}
                      <span className="muted small">{formatPercent(top.score, 0)}</span>
                    </>
                  ) : (
                    <span className="muted">no suspect</span>
                  )}
                </span>
              </Link>
            </li>
          );
        })}
      </ol>
    </>
  );
}

function BurningSlos({ slos, params }: { slos: Slo[]; params: URLSearchParams }) {
  const { shown: burning, more } = burningSlos(slos, 8);
  if (!slos.length)
    return (
      <Empty title="No SLO defined">
        Create one from any series in the{' '}
        <Link to={linkWithGlobals('/explorer', params)}>Explorer</Link>, or see{' '}
        <Link to={linkWithGlobals('/slos', params)}>SLOs</Link>.
      </Empty>
    );
  if (!burning.length)
    return (
      <Empty title={`All ${slos.length} SLOs are within budget`}>
        No SLO burns its error budget faster than it can afford.
      </Empty>
    );
  return (
    <>
      <table className="table">
        <thead>
          <tr>
            <th scope="col">SLO</th>
            <th scope="col">Budget left</th>
            <th scope="col">Burn 1h</th>
            <th scope="col">Burn 6h</th>
            <th scope="col">Alert</th>
          </tr>
        </thead>
        <tbody>
          {burning.map((s) => (
            <tr key={s.id}>
              <SloNameCell slo={s} params={params}>
                {s.service}
              </SloNameCell>
              <SloStatusCells slo={s} windows={OVERVIEW_BURN_WINDOWS} />
            </tr>
          ))}
        </tbody>
      </table>
      {more ? (
        <p className="muted small" data-testid="slos-burning-more">
          and {more} more burning: <Link to={linkWithGlobals('/slos', params)}>all SLOs</Link>
        </p>
      ) : null}
    </>
  );
}

/** The series one regression was found on, for the row's tooltip: "gap GET /lookup, client GET /lookup". */
function memberTitle(r: Regression): string {
  return r.members.map((m) => `${m.view} ${m.name}${m.peer ? ` → ${m.peer}` : ''}`).join(', ');
}
