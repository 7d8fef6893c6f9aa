/**
 * The alert page: where a paged engineer lands (every webhook links here).
 * What fired and whether anyone was paged (delivery truth from the server),
 * the series around the onset with its deploy markers, the top suspects, the
 * affected hosts, the SLO burn, acknowledge / silence / resolve with who and
 * why, and the lifecycle timeline the server computed.
 */
import { useMemo } from 'react';
import { Link, useParams } from 'react-router-dom';
import type { AlertWithEvents, Regression, Series, SilenceInput, Slo } from '@onset/contract';
import { useAlert, useAlertAction } from './api.ts';
import { useBurningRegressions } from './burning.ts';
import { useDeploys } from '../deploys/api.ts';
import { useQuantiles, useSeriesByLabels, useSeriesOne } from '../explorer/api.ts';
import { useRegression } from '../regressions/api.ts';
import { useSilenceAction } from '../silences/api.ts';
import { useSlo } from '../slos/api.ts';
import { linkWithGlobals, useUrlState } from '../../state/url.ts';
import { formatAgo, regressionWindow, resolveRange } from '../../state/timeRange.ts';
import { formatInstant } from '../../lib/time.ts';
import { formatChange, formatLatencyMs } from '../../lib/format.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';
import { QuantilesChart } from '../../components/QuantilesChart.tsx';
import { shapeQuantiles } from '../../components/graphs/quantileData.ts';
import { hostsText, toMarkers } from '../../components/graphs/markerData.ts';
import { PagingLines } from '../../components/Delivery.tsx';
import { Timeline } from '../../components/Timeline.tsx';
import { SilenceConfirmation, SilenceNote } from '../../components/SilenceNote.tsx';
import { OnCallActions } from '../../components/OnCallActions.tsx';
import { SuspectList } from '../../components/Suspects.tsx';
import { BudgetBar, formatBurn, SloBurn } from '../../components/SloParts.tsx';
import { findSeries } from '../regressions/regressionSeries.ts';
import { CohortSplitNote, useCohortSplit } from '../regressions/CohortSplit.tsx';

const CHART_HEIGHT = 300;

export default function AlertPage() {
  const { id } = useParams();
  const alert = useAlert(id);
  if (alert.data === undefined)
    return (
      <div className="page">
        {alert.error ? (
          <ErrorState error={alert.error} what={`alert ${id}`} onRetry={() => alert.refetch()} />
        ) : (
          <Loading label="Loading the alert…" height={200} />
        )}
      </div>
    );
  return <AlertView a={alert.data} />;
}

function AlertView({ a }: { a: AlertWithEvents }) {
  const { params } = useUrlState();
  const regression = useRegression(a.regression_id ?? undefined);
  const slo = useSlo(a.slo_id ?? undefined);
  const burning = useBurningRegressions([a]).get(a.slo_id ?? '') ?? [];
  const action = useAlertAction();
  const silence = useSilenceAction();
  const r = regression.data;
  const s = slo.data;
  const firing = a.status === 'firing';
  const startedMs = Date.parse(a.started_at);
  // Silence what this alert is about: its SLO, else its service and op.
  const matcher: Pick<SilenceInput, 'slo_id' | 'service' | 'op'> = a.slo_id
    ? { slo_id: a.slo_id }
    : {
        ...(a.service ? { service: a.service } : {}),
        ...(a.op ? { op: a.op as SilenceInput['op'] } : {}),
      };
  const silenceWhat = a.slo_id
    ? `SLO "${s?.name ?? a.slo_id}"`
    : [a.service, a.op].filter(Boolean).join(' ');
  const touched = (a.details?.touched_slos ?? []) as Array<{ id: string; name: string }>;

  return (
    <div className="page alert-page" data-alert-id={a.id}>
      <div className="page-head">
        <div>
          <p className="crumbs">
            <Link to={linkWithGlobals('/', params)}>Overview</Link> / alert {a.id}
          </p>
          <h1 data-testid="alert-title">{a.text?.title || a.title || `Alert ${a.id}`}</h1>
          {a.text?.cause ? (
            <p className="alert-cause" data-testid="alert-cause">
              {a.text.cause}
            </p>
          ) : null}
          <p className="muted">
            <span className={`alert-pill sev-${a.severity}`}>{a.severity}</span>{' '}
            <span data-testid="alert-status">{a.status}</span> · started {formatInstant(startedMs)}{' '}
            ({formatAgo(startedMs, Date.now())})
            {a.resolved_at ? ` · resolved ${formatInstant(Date.parse(a.resolved_at))}` : ''}
            {a.acknowledged
              ? ` · acknowledged${a.acknowledged.by ? ` by ${a.acknowledged.by}` : ''}`
              : ''}
            {a.reopened ? (
              <>
                {' · '}
                <span className="status-pill status-reopened" data-testid="alert-reopened">
                  reopened
                </span>{' '}
                {formatInstant(Date.parse(a.reopened.at))}
                {a.reopened.by ? ` by ${a.reopened.by}` : ''}
              </>
            ) : null}
          </p>
          {a.silence ? (
            <p>
              <SilenceNote s={a.silence} />
            </p>
          ) : null}
        </div>
        <div className="row gap wrap">
          {a.slo_id ? (
            <Link className="btn" to={linkWithGlobals(`/slos/${a.slo_id}`, params)}>
              Open the SLO
            </Link>
          ) : null}
          {a.regression_id ? (
            <Link
              className="btn"
              to={linkWithGlobals(`/regressions/${encodeURIComponent(a.regression_id)}`, params, {
                from: null,
                to: null,
              })}
            >
              Open the regression
            </Link>
          ) : null}
        </div>
      </div>

      <Panel title="Who was paged">
        <PagingLines alert={a} />
      </Panel>

      <Panel title="Act on it">
        <OnCallActions
          busy={action.isPending || silence.isPending}
          error={action.error ?? silence.error}
          canAck={firing && !a.acknowledged}
          canResolve={firing}
          onAck={(w) => action.mutate({ id: a.id, action: 'ack', ...nonEmpty(w) })}
          onResolve={(w) => action.mutate({ id: a.id, action: 'resolve', ...nonEmpty(w) })}
          onSilence={
            Object.keys(matcher).length
              ? (w) =>
                  silence.mutate({
                    create: {
                      ...matcher,
                      duration: w.duration,
                      comment: w.comment,
                      ...(w.by ? { created_by: w.by } : {}),
                    },
                  })
              : undefined
          }
          silenceWhat={silenceWhat}
        />
        {silence.data && !silence.isPending && !silence.error ? (
          <SilenceConfirmation s={silence.data} what={silenceWhat} />
        ) : null}
      </Panel>

      <section className="facts" aria-label="What fired">
        {a.text?.lines.length ? (
          <div className="fact" data-testid="alert-lines">
            <div className="fact-label">When it {firing ? 'fired' : 'last fired'}</div>
            {a.text.lines.map((l) => (
              <div key={l.label} className={l === a.text.lines[0] ? 'fact-value' : 'muted small'}>
                {l.text}
              </div>
            ))}
          </div>
        ) : null}
        {r ? <RegressionFacts r={r} /> : null}
        {s ? <SloFacts slo={s} /> : null}
        {a.burn_rate !== null && a.burn_rate !== undefined && !a.text?.lines.length ? (
          <div className="fact">
            <div className="fact-label">Burn when it fired</div>
            <div className="fact-value">
              {formatBurn(a.burn_rate)} over {a.window ?? '?'}
            </div>
          </div>
        ) : null}
        {burning.length ? (
          <div className="fact" data-testid="alert-burning-regressions">
            <div className="fact-label">Regressions burning it</div>
            {burning.map((b) => (
              <div key={b.id}>
                <Link
                  to={linkWithGlobals(`/regressions/${encodeURIComponent(b.id)}`, params, {
                    from: null,
                    to: null,
                  })}
                >
                  regression {b.id}: {b.service} {b.op} {b.name}
                </Link>
              </div>
            ))}
          </div>
        ) : null}
        {touched.length ? (
          <div className="fact">
            <div className="fact-label">SLOs it hurts</div>
            {touched.map((t) => (
              <div key={t.id}>
                <Link to={linkWithGlobals(`/slos/${t.id}`, params)}>{t.name}</Link>
              </div>
            ))}
          </div>
        ) : null}
      </section>

      <AlertChart a={a} r={r} slo={s} />

      {r?.suspects?.length ? (
        <Panel title={`Top suspects (${Math.min(3, r.suspects.length)} of ${r.suspects.length})`}>
          <SuspectsOf r={r} />
        </Panel>
      ) : null}

      <Panel title="Lifecycle">
        <Timeline entries={a.timeline ?? []} />
      </Panel>
    </div>
  );
}

/** Drop empty who/why fields: the API takes them optional. */
function nonEmpty(w: { by: string; comment: string }) {
  return { ...(w.by ? { by: w.by } : {}), ...(w.comment ? { comment: w.comment } : {}) };
}

function RegressionFacts({ r }: { r: Regression }) {
  return (
    <>
      <div className="fact">
        <div className="fact-label">Now (the regression)</div>
        <div className="fact-value">
          p99 {formatChange(r.before.p99_ms, r.after.p99_ms, r.ratio_p99)}
        </div>
        <div className="muted small">
          p50 {formatChange(r.before.p50_ms, r.after.p50_ms, r.ratio_p50)}
        </div>
      </div>
      <div className="fact">
        <div className="fact-label">Affected hosts</div>
        <div className="fact-value" data-testid="affected-hosts">
          {r.cohort?.slow_hosts?.length
            ? hostsText(r.cohort.slow_hosts)
            : r.host
              ? `host ${r.host}`
              : 'all hosts of the series'}
        </div>
        {r.cohort ? (
          <div className="muted small">
            {r.cohort.attribute} {r.cohort.slow.join(', ')}
          </div>
        ) : null}
      </div>
    </>
  );
}

function SloFacts({ slo }: { slo: Slo }) {
  return (
    <div className="fact">
      <div className="fact-label">SLO burn</div>
      <div className="fact-value">
        {slo.name} <BudgetBar value={slo.status?.budget_remaining ?? null} />
      </div>
      <div className="small">
        <span className="muted">1h</span> <SloBurn slo={slo} window="1h" />{' '}
        <span className="muted">6h</span> <SloBurn slo={slo} window="6h" />
      </div>
      <div className="muted small">
        p99 under {formatLatencyMs(slo.threshold_ms)} for {(slo.objective * 100).toFixed(2)}% over{' '}
        {slo.window}
      </div>
    </div>
  );
}

function SuspectsOf({ r }: { r: Regression }) {
  const onsetMs = Date.parse(r.onset);
  const deploys = useDeploys({
    from: new Date(onsetMs - 24 * 3_600_000).toISOString(),
    to: new Date(onsetMs + 3_600_000).toISOString(),
    series_id: r.series_id,
  });
  return (
    <SuspectList suspects={r.suspects.slice(0, 3)} deploys={deploys.data ?? []} onsetMs={onsetMs} />
  );
}

/** The series the alert is about, around its onset (the regression's, else when the alert fired). */
function AlertChart({ a, r, slo }: { a: AlertWithEvents; r?: Regression; slo?: Slo }) {
  // By its id where known, else by the labels the regression or the alert names: on the server.
  const seriesList = useSeriesByLabels(
    r ?? { service: a.service, op: a.op, view: a.view, name: a.series_name },
  );
  const one = useSeriesOne(r?.series_id ? String(r.series_id) : (slo?.series_id ?? undefined));
  const series: Series | undefined = useMemo(() => {
    if (one.data) return one.data;
    const list = seriesList.data ?? [];
    if (r) return findSeries(r, list);
    const id = slo?.series_id;
    if (id) return list.find((x) => x.id === id);
    return list.find(
      (x) =>
        (!a.op || x.op === a.op) &&
        (!a.view || x.view === a.view) &&
        (!a.series_name || x.name === a.series_name),
    );
  }, [one.data, seriesList.data, r, slo, a.op, a.view, a.series_name]);
  const onsetMs = r ? Date.parse(r.onset) : Date.parse(a.started_at);
  const range = useMemo(() => regressionWindow(onsetMs, Date.now()), [onsetMs]);
  const quantiles = useQuantiles(series?.id, { range, q: '0.5,0.99' });
  const deploys = useDeploys(
    { from: range.from, to: range.to, series_id: series?.id },
    series !== undefined,
  );
  const fallback = resolveRange(range, Date.now());
  const resolved = useMemo(
    () => ({
      fromMs: quantiles.data ? Date.parse(quantiles.data.from) : fallback.fromMs,
      toMs: quantiles.data ? Date.parse(quantiles.data.to) : fallback.toMs,
    }),
    [quantiles.data, fallback.fromMs, fallback.toMs],
  );
  const markers = useMemo(
    () => toMarkers(deploys.data ?? [], resolved, r?.suspects ?? []),
    [deploys.data, resolved, r?.suspects],
  );
  const frame = useMemo(
    () =>
      quantiles.data
        ? shapeQuantiles(quantiles.data, { quantiles: ['0.5', '0.99'], dropNonPositive: true })
        : null,
    [quantiles.data],
  );
  // A cohort regression: its slow hosts' line and the fast rest's, each under its own levels.
  const split = useCohortSplit(r, range, quantiles.data, resolved, 'log');
  const what = series ? `${series.name} on ${series.service} · ${series.op} · ${series.view}` : '';
  return (
    <Panel title={series ? `Latency of ${what}` : 'Latency'}>
      {split && r?.cohort ? <CohortSplitNote cohort={r.cohort} /> : null}
      {!series ? (
        seriesList.data ? (
          <p className="muted">No stored series matches this alert.</p>
        ) : (
          <Loading label="Finding the series…" height={CHART_HEIGHT} />
        )
      ) : (
        <QuantilesChart
          frame={split ? split.frame : frame}
          query={split ? split.query : quantiles}
          scale="log"
          range={resolved}
          height={CHART_HEIGHT}
          markers={markers}
          bands={split?.bands}
          onsetSec={onsetMs / 1000}
          chartId="alert"
          title={`p50 and p99 of ${what}${split && r?.cohort ? `, split by ${r.cohort.attribute} into slow and fast hosts` : ''}, log scale, around ${r ? 'the onset' : 'when the alert fired'} at ${formatInstant(onsetMs)}; ${markers.length} deploy markers`}
        />
      )}
    </Panel>
  );
}
