/**
 * One regression, for the engineer who was just paged: what regressed, since
 * when, by how much, which deploy is the suspect and why, which hosts or
 * versions, and the SLO burn, above the fold; the evidence (charts) below.
 */
import { useCallback, useEffect, useMemo } from 'react';
import { Link, useParams } from 'react-router-dom';
import {
  useDeploys,
  useQuantiles,
  useRegression,
  useRegressionAction,
  useRegressionEvidence,
  useRegressionTimeline,
  useSeriesList,
  useSeriesOne,
  useSilenceAction,
  useSlos,
} from '../../api/queries.ts';
import type { EdgeResponse, Regression, Series } from '@onset/contract';
import { ApiError } from '../../api/client.ts';
import { linkWithGlobals, useRange, useScale, useUrlState } from '../../state/url.ts';
import {
  formatAgo,
  formatInstant,
  regressionWindow,
  resolveRange,
  zoomRange,
} from '../../state/timeRange.ts';
import { slosWatching } from '../../lib/severity.ts';
import { useSloWatching } from '../slos/membership.ts';
import {
  edgeLabel,
  formatChange,
  formatCount,
  formatDelta,
  formatLatencyMs,
  formatPercent,
} from '../../lib/format.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { KindBadge, Panel, ScaleToggle } from '../../components/Controls.tsx';
import { QuantilesChart } from '../../components/QuantilesChart.tsx';
import type { LevelBand } from '../../components/graphs/ChartOverlay.tsx';
import type { PageChartContext } from '../../components/graphs/BreakdownChart.tsx';
import { ShapeTag } from '../../components/ShapeTag.tsx';
import { shapeQuantiles } from '../../components/graphs/quantileData.ts';
import { hostsText, toMarkers } from '../../components/graphs/markerData.ts';
import { EdgePanel, useEdge } from '../../components/EdgePanel.tsx';
import { reportedViews } from '../../components/graphs/edgeData.ts';
import { CohortPanel } from './CohortPanel.tsx';
import { AttributeTable, ExemplarTable, HintList } from './EvidencePanel.tsx';
import { DeployList } from '../../components/DeployList.tsx';
import { MemberList } from './MemberList.tsx';
import { relativeToOnset, SuspectList, suspectText } from '../../components/Suspects.tsx';
import { OnCallActions } from '../../components/OnCallActions.tsx';
import { SilenceConfirmation, SilenceNote } from '../../components/SilenceNote.tsx';
import { PagingLines } from '../../components/Delivery.tsx';
import { Timeline } from '../../components/Timeline.tsx';
import { BudgetBar, SloAlertPill, SloBurn } from '../../components/SloParts.tsx';

const MAIN_HEIGHT = 340;

/** The regression's alerts with who was paged, and its lifecycle, as the server computed them. */
function RegressionAlerts({ id }: { id: string }) {
  const { params } = useUrlState();
  const t = useRegressionTimeline(id);
  if (!t.data)
    return (
      <Panel title="Alert and lifecycle">
        {t.error ? (
          <ErrorState error={t.error} what="the lifecycle" onRetry={() => void t.refetch()} />
        ) : (
          <Loading label="Loading the lifecycle…" height={120} />
        )}
      </Panel>
    );
  const alerts = t.data.alerts;
  return (
    <div className="grid-2">
      <Panel title={alerts.length ? 'Alert and who was paged' : 'Alert'}>
        {alerts.length ? (
          alerts.map((a) => (
            <div key={a.id} className="regression-alert" data-alert-id={a.id}>
              <Link to={linkWithGlobals(`/alerts/${a.id}`, params)}>
                <span className={`alert-pill sev-${a.severity}`}>{a.severity}</span> alert {a.id}
              </Link>{' '}
              <span className="muted small">{a.status}</span>
              <PagingLines alert={a} />
            </div>
          ))
        ) : (
          <p className="muted">No alert was raised for this regression.</p>
        )}
      </Panel>
      <Panel title="Lifecycle">
        <Timeline entries={t.data.timeline} />
      </Panel>
    </div>
  );
}

export default function RegressionPage() {
  const { id } = useParams();
  const reg = useRegression(id);
  if (reg.data === undefined)
    return (
      <div className="page">
        {reg.error ? (
          <ErrorState
            error={reg.error}
            what={
              reg.error instanceof ApiError &&
              reg.error.status === 404 &&
              !reg.error.missingEndpoint
                ? `regression ${id} (it may have been deleted)`
                : `regression ${id}`
            }
            onRetry={() => reg.refetch()}
          />
        ) : (
          <Loading label="Loading the regression…" height={MAIN_HEIGHT + 200} />
        )}
      </div>
    );
  return <RegressionView r={reg.data} />;
}

function RegressionView({ r }: { r: Regression }) {
  const { params, set } = useUrlState();
  const onsetMs = Date.parse(r.onset);
  const [urlRange, setRange] = useRange();
  const hasRange = params.has('from');
  const dflt = useMemo(() => regressionWindow(onsetMs, Date.now()), [onsetMs]);
  // Put the window in the URL so this exact view is what a shared link shows.
  useEffect(() => {
    if (!hasRange) set({ from: dflt.from, to: dflt.to });
  }, [hasRange, dflt, set]);
  const range = hasRange ? urlRange : dflt;
  const [scale, setScale] = useScale();
  const seriesList = useSeriesList({ service: r.service });
  // By its id where the regression has one: a service may have more series than a list page.
  const one = useSeriesOne(r.series_id ? String(r.series_id) : undefined);
  const series = one.data ?? findSeries(r, seriesList.data ?? []);
  const quantiles = useQuantiles(series?.id, { range, q: '0.5,0.99' });
  const seriesId = r.series_id ?? series?.id;
  const deploys = useDeploys(
    { from: range.from, to: range.to, series_id: seriesId },
    seriesId !== undefined,
  );
  const slos = useSlos();
  const { watching } = useSloWatching([r.series_id]);
  const action = useRegressionAction();
  const silence = useSilenceAction();

  const fallback = resolveRange(range, Date.now());
  const fromMs = quantiles.data ? Date.parse(quantiles.data.from) : fallback.fromMs;
  const toMs = quantiles.data ? Date.parse(quantiles.data.to) : fallback.toMs;
  const resolved = useMemo(() => ({ fromMs, toMs }), [fromMs, toMs]);
  const suspects = useMemo(() => r.suspects ?? [], [r.suspects]);
  const suspectIds = useMemo(
    () => new Map(suspects.map((s, i) => [String(s.deploy_id), i + 1])),
    [suspects],
  );
  const shownDeploys = useMemo(() => {
    // The server keeps the markers that can explain this series (the rule attribution uses),
    // so every suspect is among them.
    return deploys.data ?? [];
  }, [deploys.data]);
  const markers = useMemo(
    () => toMarkers(shownDeploys, resolved, suspects),
    [shownDeploys, resolved, suspects],
  );
  const frame = useMemo(
    () =>
      quantiles.data
        ? shapeQuantiles(quantiles.data, {
            quantiles: ['0.5', '0.99'],
            dropNonPositive: scale === 'log',
          })
        : null,
    [quantiles.data, scale],
  );
  const bands = useMemo<LevelBand[]>(
    () => [
      {
        key: 'before',
        label: `before: p50 ${formatLatencyMs(r.before.p50_ms)} · p99 ${formatLatencyMs(r.before.p99_ms)}`,
        x0: resolved.fromMs / 1000,
        x1: onsetMs / 1000,
        lo: r.before.p50_ms,
        hi: r.before.p99_ms,
      },
      {
        key: 'after',
        label: `after: p50 ${formatLatencyMs(r.after.p50_ms)} · p99 ${formatLatencyMs(r.after.p99_ms)}`,
        x0: onsetMs / 1000,
        x1: resolved.toMs / 1000,
        lo: r.after.p50_ms,
        hi: r.after.p99_ms,
      },
    ],
    [r.before, r.after, onsetMs, resolved],
  );
  const onZoom = useCallback((a: number, b: number) => setRange(zoomRange(a, b)), [setRange]);
  // The edge and cohort charts line up with the main chart: same window, scale, markers and onset.
  const breakdownCharts: PageChartContext = { range, resolved, scale, markers, onsetMs, onZoom };
  const isEdge = !!r.peer || r.view === 'gap' || r.view === 'client';
  const edgeQuery = useEdge(seriesId, { range, onsetMs }, isEdge);
  const edge = isEdge && reportedViews(edgeQuery.data) >= 1 ? edgeQuery.data : undefined;
  const matchingSlos = slosWatching(r, slos.data ?? [], watching);
  const top = suspects[0];
  const topDeploy = top
    ? (deploys.data ?? []).find((d) => String(d.id) === String(top.deploy_id))
    : undefined;
  const where = `${edgeLabel(r)} · ${r.op} · ${r.view}`;

  return (
    <div className="page regression-page">
      <div className="page-head">
        <div>
          <p className="crumbs">
            <Link to={linkWithGlobals('/', params, { from: null, to: null })}>Overview</Link> /
            regression {r.id}
          </p>
          <h1>
            <span className="mono">{r.name}</span> <span className="muted">on</span> {where}
            {r.host ? <span className="muted"> · host {r.host}</span> : null}
          </h1>
          {r.silence ? (
            <p>
              <SilenceNote s={r.silence} />
            </p>
          ) : null}
        </div>
        <div className="row gap wrap">
          <span className={`status-pill status-${r.status}`} data-testid="regression-status">
            {r.status}
          </span>
          <ShapeTag r={r} />
          {r.status === 'resolved' ? (
            <button
              type="button"
              className="btn"
              disabled={action.isPending}
              onClick={() => action.mutate({ id: r.id, action: 'reopen' })}
            >
              Reopen
            </button>
          ) : null}
        </div>
      </div>
      {r.status !== 'resolved' ? (
        <Panel title="Act on it">
          <OnCallActions
            busy={action.isPending || silence.isPending}
            error={silence.error}
            canAck={r.status === 'open'}
            canResolve
            onAck={(w) => action.mutate({ id: r.id, action: 'ack', ...w })}
            onResolve={(w) => action.mutate({ id: r.id, action: 'resolve', ...w })}
            onSilence={(w) =>
              silence.mutate({
                create: {
                  service: r.service,
                  op: r.op,
                  duration: w.duration,
                  comment: w.comment,
                  ...(w.by ? { created_by: w.by } : {}),
                },
              })
            }
            silenceWhat={`${r.service} ${r.op}`}
          />
          {silence.data && !silence.isPending && !silence.error ? (
            <SilenceConfirmation s={silence.data} what={`${r.service} ${r.op}`} />
          ) : null}
        </Panel>
      ) : null}
      {r.status === 'acknowledged' || r.status === 'resolved' ? (
        <p className="muted small" role="status">
          {r.status === 'acknowledged'
            ? `Acknowledged${r.acknowledged_by ? ` by ${r.acknowledged_by}` : ''}${r.acknowledged_at ? ` ${formatAgo(Date.parse(r.acknowledged_at), Date.now())}` : ''}.`
            : null}
          {r.status === 'resolved'
            ? `Resolved${r.resolved_at ? ` ${formatAgo(Date.parse(r.resolved_at), Date.now())}` : ''}${r.resolution ? `: ${r.resolution}` : ''}.`
            : null}
        </p>
      ) : null}
      {action.error ? (
        <p className="warn" role="alert">
          Could not change the status: {(action.error as Error).message}
        </p>
      ) : null}

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

      <Panel
        title="Latency around the onset"
        actions={
          <>
            <ScaleToggle scale={scale} onChange={setScale} />
            {series ? (
              <Link
                className="btn"
                to={linkWithGlobals('/explorer', params, { series: series.id })}
              >
                Open in Explorer
              </Link>
            ) : null}
          </>
        }
      >
        {!series ? (
          seriesList.data ? (
            <ErrorState
              error={new Error(`no series ${where} ${r.name} is stored any more`)}
              what="the series"
              height={MAIN_HEIGHT}
            />
          ) : (
            <Loading label="Finding the series…" height={MAIN_HEIGHT + 28} />
          )
        ) : (
          <QuantilesChart
            frame={frame}
            query={quantiles}
            scale={scale}
            range={resolved}
            height={MAIN_HEIGHT}
            markers={markers}
            bands={bands}
            onsetSec={onsetMs / 1000}
            onZoom={onZoom}
            chartId="regression"
            title={`p50 and p99 of ${r.name} on ${where}, ${scale} scale: before ${formatLatencyMs(r.before.p50_ms)} p50, after ${formatLatencyMs(r.after.p50_ms)} p50; onset ${formatInstant(onsetMs)}; ${markers.length} deploy markers${top ? `, top suspect ${top.kind}` : ''}`}
          />
        )}
      </Panel>

      {r.members.length > 1 ? (
        <Panel title={`One incident, found on ${r.members.length} series`}>
          <MemberList members={r.members} />
        </Panel>
      ) : null}

      <Panel title={`Suspects (${suspects.length})`}>
        {suspects.length ? (
          <SuspectList suspects={suspects} deploys={deploys.data ?? []} onsetMs={onsetMs} />
        ) : (
          <p className="muted">The engine found no deploy marker that explains this change.</p>
        )}
      </Panel>

      {/* Below the fold: it loads after the page and must not push the chart (layout shift). */}
      <RegressionAlerts id={r.id} />

      <EvidenceSection id={r.id} />

      {edge ? (
        <Panel title="Client, server and gap views of this edge">
          <EdgePanel edge={edge} {...breakdownCharts} />
        </Panel>
      ) : null}

      {series ? (
        <Panel title="Cohort split">
          <CohortPanel sources={cohortSources(series, edge)} hint={r.cohort} {...breakdownCharts} />
        </Panel>
      ) : null}

      <Panel title={`Deploy markers in this window (${shownDeploys.length})`}>
        {shownDeploys.length ? (
          <DeployList
            deploys={[...shownDeploys].sort((a, b) => Date.parse(b.at) - Date.parse(a.at))}
            suspects={suspectIds}
          />
        ) : (
          <p className="muted">No deploy marker in this window.</p>
        )}
      </Panel>
    </div>
  );
}

/** The regression's series: by id when the engine gives one, else by labels. */
export function findSeries(
  r: Pick<Regression, 'series_id' | 'service' | 'op' | 'view' | 'name' | 'peer'>,
  list: readonly Series[],
): Series | undefined {
  if (r.series_id) {
    const s = list.find((x) => x.id === String(r.series_id));
    if (s) return s;
  }
  return list.find(
    (s) =>
      s.service === r.service &&
      s.op === r.op &&
      s.view === r.view &&
      s.name === r.name &&
      (s.peer ?? '') === (r.peer ?? ''),
  );
}

/**
 * Whose hosts the cohort split can look at. Edge series are filed under the
 * caller, but the gap and server views are fed by the callee's hosts, so a
 * callee's version or dependency bump shows there; the client view shows the
 * caller's hosts.
 */
type SeriesLabels = Pick<Series, 'id' | 'service' | 'view' | 'peer'>;

function cohortSources(
  series: SeriesLabels,
  edge: EdgeResponse | undefined,
): Array<{ id: string; label: string }> {
  const whose = (s: SeriesLabels) =>
    s.peer && (s.view === 'gap' || s.view === 'server') ? s.peer : s.service;
  const out: Array<{ id: string; label: string }> = [];
  const add = (s: SeriesLabels | null | undefined) => {
    if (!s || out.some((o) => o.id === s.id)) return;
    const label = `${whose(s)} hosts (${s.view} view)`;
    if (out.some((o) => o.label.startsWith(`${whose(s)} hosts`))) return;
    out.push({ id: s.id, label });
  };
  add(series);
  const view = (v: string) => edge?.views.find((x) => x.view === v)?.series;
  add(view('gap'));
  add(view('server'));
  add(view('client'));
  return out;
}

/** Hints, attribute lifts and exemplars from GET /api/v1/regressions/:id/evidence. */
function EvidenceSection({ id }: { id: string }) {
  const evidence = useRegressionEvidence(id);
  if (evidence.isLoading) return <Panel title="Evidence">{<Loading />}</Panel>;
  if (evidence.error || !evidence.data)
    return (
      <Panel title="Evidence">
        <ErrorState
          error={evidence.error}
          what="the evidence"
          onRetry={() => void evidence.refetch()}
        />
      </Panel>
    );
  const e = evidence.data;
  return (
    <>
      <Panel title="Likely mechanism">
        <HintList hints={e.hints} />
      </Panel>
      <Panel title="What the slow calls after the onset have in common">
        <AttributeTable lifts={e.attributes} />
      </Panel>
      <Panel title="Example calls">
        <ExemplarTable exemplars={e.exemplars} />
      </Panel>
    </>
  );
}
