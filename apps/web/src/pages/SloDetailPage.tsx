/** One SLO: SLI, budget left and its burndown, burn rate per window against the alert thresholds, alert history. */
import { useMemo } from 'react';
import { Link, useParams } from 'react-router-dom';
import { useQueries } from '@tanstack/react-query';
import { parseDuration } from '@onset/contract';
import { useAlerts, useRefetchInterval, useSeriesList, useSlo } from '../api/queries.ts';
import { apiFetch, apiPath } from '../api/client.ts';
import type { HeatmapResponse, Series, Slo } from '../api/types.ts';
import { linkWithGlobals, useRange, useUrlState } from '../state/url.ts';
import { extendBack, formatAgo, formatInstant, resolveRange } from '../state/timeRange.ts';
import { ErrorState, Loading } from '../components/States.tsx';
import { Panel } from '../components/Controls.tsx';
import { ALERT_BURN_RATE, BudgetBar, BurnCell, SloBurn, formatBurn } from './slos/sloParts.tsx';
import {
  BURN_TIERS,
  budgetRemaining,
  burnStepMs,
  countsFromHistograms,
  denseCounts,
  rollingBurn,
  timeToExhaustionMs,
  type StepCounts,
} from '../components/graphs/errorBudget.ts';
import { TimeSeriesChart } from '../components/graphs/TimeSeriesChart.tsx';
import { formatLatencyMs, formatPercent } from '../lib/format.ts';
import { sloMatches } from '../lib/severity.ts';

const BURN_COLORS: Record<string, string> = {
  '1h': '--line-p999',
  '6h': '--line-p99',
  '1d': '--line-p90',
  '3d': '--line-p50',
};
const CHART_HEIGHT = 220;

export default function SloDetailPage() {
  const { id } = useParams();
  const slo = useSlo(id);
  if (slo.data === undefined)
    return (
      <div className="page">
        {slo.error ? (
          <ErrorState error={slo.error} what={`SLO ${id}`} onRetry={() => slo.refetch()} />
        ) : (
          <Loading label="Loading the SLO…" height={400} />
        )}
      </div>
    );
  return <SloView slo={slo.data} />;
}

function SloView({ slo }: { slo: Slo }) {
  const { params } = useUrlState();
  const [range] = useRange();
  const seriesList = useSeriesList({ service: slo.service });
  const alerts = useAlerts({ slo_id: slo.id, limit: 50 });
  const st = slo.status;
  const windowMs = safeDuration(slo.window, 28 * 86_400_000);
  const series = useMemo(() => sloSeries(slo, seriesList.data ?? []), [slo, seriesList.data]);
  const history = useSloHistory(slo, series, range, windowMs);
  const tiers = st?.tiers?.length
    ? st.tiers
    : BURN_TIERS.map((t) => ({
        name: `${t.long}/${t.short}`,
        severity: t.severity,
        long: t.long,
        short: t.short,
        enabled: true,
        factor: t.factor,
        burn_long: st?.burn_rates?.[t.long] ?? null,
        burn_short: st?.burn_rates?.[t.short] ?? null,
        firing: false,
      }));
  const burn1h = st?.burn_rates?.['1h'] ?? null;
  const tte = timeToExhaustionMs(st?.budget_remaining ?? null, burn1h, windowMs);

  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>{slo.name}</h1>
          <p className="muted">
            {formatPercent(slo.objective, slo.objective >= 0.999 ? 2 : 1)} of{' '}
            {[slo.service, slo.op, slo.view].filter(Boolean).join(' ')}
            {slo.name_match ? (
              <>
                {' '}
                calls matching <code>{slo.name_match}</code>
              </>
            ) : (
              ' calls'
            )}{' '}
            under <b>{formatLatencyMs(slo.threshold_ms)}</b>, over a{' '}
            {slo.calendar ? 'calendar' : 'rolling'} {slo.window} window
          </p>
        </div>
        <div className="row gap">
          {st?.alert ? (
            <span className={`alert-pill big sev-${st.alert.severity}`}>
              {st.alert.severity === 'page' ? 'Paging' : 'Ticket'} since{' '}
              {formatInstant(Date.parse(st.alert.since))}
            </span>
          ) : (
            <span className="alert-pill ok">No alert</span>
          )}
          {series[0] ? (
            <Link
              className="btn"
              to={linkWithGlobals('/explorer', params, { series: series[0].id })}
            >
              Open series in Explorer
            </Link>
          ) : null}
        </div>
      </div>

      <div className="stat-row">
        <div className="stat">
          <div className="stat-label">SLI now</div>
          <div className="stat-value">{formatPercent(st?.sli ?? null, 3)}</div>
          <div className="muted small">
            {st?.total !== undefined
              ? `${(st.good ?? 0).toLocaleString()} good of ${st.total.toLocaleString()}`
              : ''}
          </div>
        </div>
        <div className="stat">
          <div className="stat-label">Error budget left</div>
          <div className="stat-value">
            <BudgetBar value={st?.budget_remaining ?? null} />
          </div>
          <div className="muted small">
            {(st?.budget_remaining ?? 1) <= 0
              ? `spent: the SLO is broken over the last ${slo.window}`
              : tte !== null
                ? `gone in ${formatSpan(tte)} at the 1 h burn rate`
                : 'not burning'}
          </div>
        </div>
        <div className="stat">
          <div className="stat-label">Burn rate 1 h / 6 h</div>
          <div className="stat-value">
            <BurnCell value={burn1h} threshold={ALERT_BURN_RATE['1h']} /> /{' '}
            <SloBurn slo={slo} window="6h" />
          </div>
          <div className="muted small">1× spends the budget in exactly {slo.window}</div>
        </div>
      </div>

      <Panel title="Alert windows (multiwindow, multi-burn-rate)">
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Alert</th>
              <th scope="col">Long window</th>
              <th scope="col">Short window</th>
              <th scope="col">Fires at</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {tiers.map((t) => (
              <tr key={t.name} className={t.firing ? 'highlight' : ''}>
                <td>
                  <span className={`alert-pill sev-${t.severity}`}>{t.severity}</span>
                  {!t.enabled ? <span className="muted small"> (disabled)</span> : null}
                </td>
                <td>
                  {t.long}: <BurnCell value={t.burn_long} threshold={t.factor} />
                </td>
                <td>
                  {t.short}: <BurnCell value={t.burn_short} threshold={t.factor} />
                </td>
                <td>both ≥ {formatBurn(t.factor)}</td>
                <td>
                  {t.firing ? <b className="warn">firing</b> : <span className="muted">ok</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Panel>

      <div className="grid-2">
        <Panel title="Error budget left (burndown)">
          {history.error ? (
            <ErrorState error={history.error} what="the budget history" height={CHART_HEIGHT} />
          ) : history.budget ? (
            <TimeSeriesChart
              x={history.budget.x}
              lines={[
                {
                  key: 'budget',
                  label: 'budget left',
                  colorVar: '--line-p50',
                  values: history.budget.values,
                },
              ]}
              thresholds={[{ value: 0, colorVar: '--danger', label: 'budget spent' }]}
              yScale="linear"
              yRange={history.budget.yRange}
              format={(v) => formatPercent(v, 0)}
              range={history.range}
              height={CHART_HEIGHT}
              chartId="budget"
              title={`Error budget left over the rolling ${slo.window}`}
            />
          ) : (
            <Loading
              label={series.length ? 'Loading history…' : 'No series matches this SLO yet'}
              height={CHART_HEIGHT + 28}
            />
          )}
        </Panel>
        <Panel title="Burn rate per window, with alert thresholds">
          {history.error ? (
            <ErrorState error={history.error} what="the burn-rate history" height={CHART_HEIGHT} />
          ) : history.burn ? (
            <TimeSeriesChart
              x={history.burn.x}
              lines={BURN_TIERS.map((t) => ({
                key: t.long,
                label: `${t.long} (alerts ≥ ${t.factor}×)`,
                colorVar: BURN_COLORS[t.long]!,
                values: history.burn!.lines[t.long]!,
              }))}
              thresholds={BURN_TIERS.map((t) => ({
                value: t.factor,
                colorVar: BURN_COLORS[t.long]!,
                label: `${t.factor}× ${t.severity} (${t.long})`,
              }))}
              yScale="log"
              yRange={[0.01, Math.max(100, history.burn.max * 2)]}
              format={(v) => formatBurn(v)}
              range={history.range}
              height={CHART_HEIGHT}
              chartId="burn"
              title="Burn rate over 1 h, 6 h, 1 d and 3 d windows with the page and ticket thresholds"
            />
          ) : (
            <Loading
              label={series.length ? 'Loading history…' : 'No series matches this SLO yet'}
              height={CHART_HEIGHT + 28}
            />
          )}
          <p className="muted small">
            Burn rates under 0.01× are drawn at 0.01×. Estimated from the latency histograms (≤ 2%
            error at the threshold).
          </p>
        </Panel>
      </div>

      <Panel title="Alert history">
        {alerts.data === undefined ? (
          alerts.error ? (
            <ErrorState error={alerts.error} what="alert history" />
          ) : (
            <Loading label="Loading alerts…" height={80} />
          )
        ) : alerts.data.length === 0 ? (
          <p className="muted">This SLO has never alerted.</p>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Severity</th>
                <th scope="col">Burn</th>
                <th scope="col">Resolved</th>
                <th scope="col">Notified</th>
              </tr>
            </thead>
            <tbody>
              {alerts.data.map((a) => (
                <tr key={a.id}>
                  <td>
                    <Link to={linkWithGlobals(`/alerts/${a.id}`, params)}>
                      {formatInstant(Date.parse(a.started_at))}
                    </Link>
                    <div className="muted small">
                      {formatAgo(Date.parse(a.started_at), Date.now())}
                    </div>
                  </td>
                  <td>
                    <span className={`alert-pill sev-${a.severity}`}>{a.severity}</span>
                  </td>
                  <td>
                    {formatBurn(a.burn_rate ?? null)}{' '}
                    {a.window ? <span className="muted small">over {a.window}</span> : null}
                  </td>
                  <td>
                    {a.resolved_at ? (
                      formatInstant(Date.parse(a.resolved_at))
                    ) : (
                      <b className="warn">still firing</b>
                    )}
                  </td>
                  <td>
                    {a.silenced_by ? 'silenced' : a.notified ? 'yes' : 'no'}
                    {a.acknowledged ? ' · acked' : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Panel>
    </div>
  );
}

/** The series an SLO counts: its bound series, or those its selector matches. */
function sloSeries(slo: Slo, all: readonly Series[]): Series[] {
  if (slo.series_id) return all.filter((s) => s.id === slo.series_id);
  return all
    .filter((s) =>
      sloMatches(slo, {
        series_id: null,
        service: s.service,
        op: s.op,
        view: s.view,
        name: s.name,
        peer: s.peer,
      }),
    )
    .slice(0, 10);
}

function useSloHistory(
  slo: Slo,
  series: Series[],
  range: { from: string; to: string },
  windowMs: number,
) {
  const interval = useRefetchInterval();
  const now = Date.now();
  const resolved = resolveRange(range, now);
  const width = resolved.toMs - resolved.fromMs;
  const burnStep = burnStepMs(width, 3 * 86_400_000);
  const budgetStep = Math.max(3_600_000, burnStepMs(width, windowMs));
  const burnRange = extendBack(range, 3 * 86_400_000, now);
  const budgetRange = extendBack(range, windowMs, now);
  const fetchHeat = (id: string, r: { from: string; to: string }, stepMs: number) => ({
    queryKey: ['heatmap', id, r.from, r.to, `${stepMs}ms`, ''],
    queryFn: ({ signal }: { signal: AbortSignal }) =>
      apiFetch<HeatmapResponse>(
        apiPath(`/api/v1/series/${encodeURIComponent(id)}/heatmap`, {
          from: r.from,
          to: r.to,
          step: `${Math.round(stepMs / 60_000)}m`,
        }),
        { signal },
      ),
    refetchInterval: interval,
  });
  const burnQ = useQueries({ queries: series.map((s) => fetchHeat(s.id, burnRange, burnStep)) });
  const budgetQ = useQueries({
    queries: series.map((s) => fetchHeat(s.id, budgetRange, budgetStep)),
  });
  const error = [...burnQ, ...budgetQ].find((q) => q.error)?.error ?? null;
  const burnData = burnQ.map((q) => q.data);
  const budgetData = budgetQ.map((q) => q.data);
  // A fixed-size dependency that changes whenever any answer does.
  const dataKey = [...burnQ, ...budgetQ].map((q) => q.dataUpdatedAt).join(',');

  return useMemo(() => {
    const ready = (xs: Array<HeatmapResponse | undefined>) => xs.length > 0 && xs.every(Boolean);
    const toMs = Date.parse(
      (burnData[0] ?? budgetData[0])?.to ?? new Date(resolved.toMs).toISOString(),
    );
    const view = { fromMs: toMs - width, toMs };
    const merged = (xs: HeatmapResponse[], step: number, fromMs: number) => {
      const sum = new Map<number, StepCounts>();
      for (const r of xs)
        for (const c of countsFromHistograms(r.points, slo.threshold_ms)) {
          const e = sum.get(c.tMs) ?? { tMs: c.tMs, total: 0, bad: 0 };
          e.total += c.total;
          e.bad += c.bad;
          sum.set(c.tMs, e);
        }
      return denseCounts([...sum.values()], step, fromMs, toMs);
    };
    let burn: { x: number[]; lines: Record<string, Array<number | null>>; max: number } | null =
      null;
    if (ready(burnData)) {
      const counts = merged(burnData as HeatmapResponse[], burnStep, Date.parse(burnData[0]!.from));
      const first = counts.findIndex((c) => c.tMs >= view.fromMs);
      const x = counts.slice(first).map((c) => (c.tMs + burnStep) / 1000);
      const lines: Record<string, Array<number | null>> = {};
      let max = 0;
      for (const t of BURN_TIERS) {
        lines[t.long] = rollingBurn(counts, burnStep, t.longMs, slo.objective)
          .slice(first)
          .map((v) => (v === null ? null : Math.max(0.01, v)));
        for (const v of lines[t.long]!) if (v !== null && v > max) max = v;
      }
      burn = { x, lines, max };
    }
    let budget: { x: number[]; values: Array<number | null>; yRange: [number, number] } | null =
      null;
    if (ready(budgetData)) {
      const counts = merged(
        budgetData as HeatmapResponse[],
        budgetStep,
        Date.parse(budgetData[0]!.from),
      );
      const first = Math.max(
        0,
        counts.findIndex((c) => c.tMs >= view.fromMs - budgetStep),
      );
      const values = budgetRemaining(counts, budgetStep, windowMs, slo.objective).slice(first);
      const min = Math.min(0, ...values.filter((v): v is number => v !== null));
      budget = {
        x: counts.slice(first).map((c) => (c.tMs + budgetStep) / 1000),
        values,
        yRange: [Math.floor(min * 10) / 10 - 0.05, 1.05],
      };
    }
    return { burn, budget, error, range: view };
  }, [dataKey, error, slo.threshold_ms, slo.objective, width, burnStep, budgetStep, windowMs]);
}

function safeDuration(text: string, dflt: number): number {
  try {
    return parseDuration(text);
  } catch {
    return dflt;
  }
}

function formatSpan(ms: number): string {
  const h = ms / 3_600_000;
  if (h < 1) return `${Math.round(ms / 60_000)} min`;
  if (h < 48) return `${h.toFixed(1)} h`;
  return `${(h / 24).toFixed(1)} days`;
}
