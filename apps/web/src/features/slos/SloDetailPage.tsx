/** One SLO: SLI, budget left and its burndown, burn rate per window against the alert thresholds, alert history. */
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { useAlerts } from '../alerts/api.ts';
import { useRegressions } from '../regressions/api.ts';
import { useSlo, useSloChange } from './api.ts';
import type { Slo, SloInput } from '@onset/contract';
import { PagingBadge, PagingLines } from '../../components/Delivery.tsx';
import { formatChange } from '../../lib/format.ts';
import { linkWithGlobals, useRange, useUrlState } from '../../state/url.ts';
import { formatAgo, formatInstant } from '../../state/timeRange.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';
import {
  BudgetBar,
  BurnCell,
  SloBurn,
  formatBurn,
  formatFactor,
} from '../../components/SloParts.tsx';
import { useSloHistory, useSloWatching } from './api.ts';
import type { SloHistory } from '@onset/contract';
import { TimeSeriesChart } from '../../components/graphs/TimeSeriesChart.tsx';
import { formatLatencyMs, formatPercent } from '../../lib/format.ts';
import { tierFactor } from '../../lib/slos.ts';

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
  const alerts = useAlerts({ slo_id: slo.id, limit: 50 });
  const st = slo.status;
  const history = useSloHistory(slo.id, range);
  const h = history.data;
  const charts = h ? chartsOf(h) : null;
  const tiers = st?.tiers ?? [];
  const burn1h = st?.burn_rates?.['1h'] ?? null;
  const tte = h?.exhaustion_ms ?? null;
  const firstSeries = h?.series_ids[0];

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
            <Link
              className={`alert-pill big sev-${st.alert.severity}`}
              to={linkWithGlobals(`/alerts/${st.alert.id}`, params)}
            >
              {st.alert.severity === 'page' ? 'Paging' : 'Ticket'} since{' '}
              {formatInstant(Date.parse(st.alert.since))}
            </Link>
          ) : (
            <span className="alert-pill ok">No alert</span>
          )}
          {firstSeries ? (
            <Link
              className="btn"
              to={linkWithGlobals('/explorer', params, { series: firstSeries })}
            >
              Open series in Explorer
            </Link>
          ) : null}
        </div>
      </div>

      <SloManage slo={slo} />
      {st?.alert ? (
        <Panel title="Who was paged">
          <PagingLines alert={st.alert} />
          <p className="small">
            <Link to={linkWithGlobals(`/alerts/${st.alert.id}`, params)}>
              Open the alert: acknowledge, silence, resolve
            </Link>
          </p>
        </Panel>
      ) : null}
      <BurningRegressions slo={slo} />

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
            <BurnCell value={burn1h} threshold={tierFactor(slo, '1h')} /> /{' '}
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
                <td data-factor={t.factor}>both ≥ {formatFactor(t.factor)}</td>
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
          {history.error && !h ? (
            <ErrorState error={history.error} what="the budget history" height={CHART_HEIGHT} />
          ) : charts ? (
            <TimeSeriesChart
              x={charts.budget.x}
              lines={[
                {
                  key: 'budget',
                  label: 'budget left',
                  colorVar: '--line-p50',
                  values: charts.budget.values,
                },
              ]}
              thresholds={[{ value: 0, colorVar: '--danger', label: 'budget spent' }]}
              yScale="linear"
              yRange={charts.budget.yRange}
              format={(v) => formatPercent(v, 0)}
              range={charts.range}
              height={CHART_HEIGHT}
              chartId="budget"
              title={`Error budget left over the ${slo.calendar ? 'calendar' : 'rolling'} ${slo.window}`}
            />
          ) : (
            <Loading label="Loading history…" height={CHART_HEIGHT + 28} />
          )}
          {h && h.series_ids.length === 0 ? (
            <p className="muted small">No series matches this SLO yet.</p>
          ) : null}
        </Panel>
        <Panel title="Burn rate per window, with alert thresholds">
          {history.error && !h ? (
            <ErrorState error={history.error} what="the burn-rate history" height={CHART_HEIGHT} />
          ) : charts ? (
            <TimeSeriesChart
              x={charts.burn.x}
              lines={charts.burn.lines}
              thresholds={charts.burn.thresholds}
              yScale="log"
              yRange={[0.01, Math.max(100, charts.burn.max * 2)]}
              format={(v) => formatBurn(v)}
              range={charts.range}
              height={CHART_HEIGHT}
              chartId="burn"
              title="Burn rate over each alert tier's long window, with the factor that tier alerts at"
            />
          ) : (
            <Loading label="Loading history…" height={CHART_HEIGHT + 28} />
          )}
          <p className="muted small">
            Burn rates under 0.01× are drawn at 0.01×. Estimated from the latency histograms of
            every series this SLO watches (≤ 2% error at the threshold); the thresholds are the
            factors the server alerts at for a {slo.window} window.
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
                <th scope="col">Paged</th>
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
                    <PagingBadge alert={a} />
                    {a.acknowledged
                      ? ` · acknowledged${a.acknowledged.by ? ` by ${a.acknowledged.by}` : ''}`
                      : ''}
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

/** The SLO's spec as the API takes it back (PUT replaces the whole spec). */
function specOf(slo: Slo): SloInput {
  const opt = <T,>(v: T | null | undefined) => (v === null || v === undefined ? undefined : v);
  return {
    name: slo.name,
    description: opt(slo.description),
    service: slo.service,
    op: opt(slo.op) as SloInput['op'],
    view: opt(slo.view) as SloInput['view'],
    name_match: opt(slo.name_match),
    peer: opt(slo.peer),
    series_id: opt(slo.series_id),
    threshold_ms: slo.threshold_ms,
    objective: slo.objective,
    window: slo.window,
    calendar: slo.calendar,
    time_zone: slo.time_zone,
    alert_tiers: slo.alert_tiers as SloInput['alert_tiers'],
    min_events: slo.min_events,
    min_bad_events: slo.min_bad_events,
    labels: slo.labels,
  };
}

/** Edit the SLO's name, threshold, objective and window, or delete it. */
function SloManage({ slo }: { slo: Slo }) {
  const change = useSloChange();
  const navigate = useNavigate();
  const { params } = useUrlState();
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(slo.name);
  const [threshold, setThreshold] = useState(String(slo.threshold_ms));
  const [objective, setObjective] = useState(String(+(slo.objective * 100).toFixed(4)));
  const [window, setWindow] = useState(slo.window);
  const save = () =>
    change.mutate(
      {
        id: slo.id,
        spec: {
          ...specOf(slo),
          name: name.trim() || slo.name,
          threshold_ms: Number(threshold),
          objective: Number(objective) / 100,
          window: window.trim() || slo.window,
        },
      },
      { onSuccess: () => setEditing(false) },
    );
  const remove = () => {
    if (!globalThis.confirm(`Delete the SLO "${slo.name}"? Its firing alerts resolve.`)) return;
    change.mutate(
      { id: slo.id, spec: 'delete' },
      { onSuccess: () => navigate(linkWithGlobals('/slos', params)) },
    );
  };
  return (
    <div className="slo-manage">
      <div className="row gap">
        <button type="button" className="btn" onClick={() => setEditing((e) => !e)}>
          {editing ? 'Cancel edit' : 'Edit SLO'}
        </button>
        <button type="button" className="btn" disabled={change.isPending} onClick={remove}>
          Delete SLO
        </button>
      </div>
      {editing ? (
        <form
          className="row gap wrap"
          aria-label="Edit the SLO"
          onSubmit={(e) => {
            e.preventDefault();
            save();
          }}
        >
          <label>
            Name <input name="name" value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <label>
            Threshold (ms){' '}
            <input
              name="threshold_ms"
              type="number"
              min="0"
              step="any"
              value={threshold}
              onChange={(e) => setThreshold(e.target.value)}
            />
          </label>
          <label>
            Objective (%){' '}
            <input
              name="objective"
              type="number"
              min="0"
              max="99.9999"
              step="any"
              value={objective}
              onChange={(e) => setObjective(e.target.value)}
            />
          </label>
          <label>
            Window{' '}
            <input name="window" value={window} onChange={(e) => setWindow(e.target.value)} />
          </label>
          <button type="submit" className="btn" disabled={change.isPending}>
            Save
          </button>
        </form>
      ) : null}
      {change.error ? (
        <p className="warn" role="alert">
          Could not change the SLO: {(change.error as Error).message}
        </p>
      ) : null}
    </div>
  );
}

/** Open regressions on series this SLO watches (the server's membership), each linked. */
function BurningRegressions({ slo }: { slo: Slo }) {
  const { params } = useUrlState();
  const regressions = useRegressions({ status: 'active', service: slo.service });
  const list = regressions.data ?? [];
  const { watching } = useSloWatching(list.map((r) => r.series_id));
  const mine = list.filter((r) => (watching.get(r.series_id) ?? []).includes(slo.id));
  if (!mine.length) return null;
  return (
    <Panel title={`Open regressions on series this SLO watches (${mine.length})`}>
      <ul className="plain-list" data-testid="slo-regressions">
        {mine.map((r) => (
          <li key={r.id}>
            <Link
              to={linkWithGlobals(`/regressions/${encodeURIComponent(r.id)}`, params, {
                from: null,
                to: null,
              })}
            >
              {r.name} on {r.service} · {r.op} · {r.view}
            </Link>{' '}
            <span className="muted small">
              p99 {formatChange(r.before.p99_ms, r.after.p99_ms, r.ratio_p99)} · since{' '}
              {formatInstant(Date.parse(r.onset))}
            </span>
          </li>
        ))}
      </ul>
    </Panel>
  );
}

/** The server's history as chart inputs: seconds on x, burn drawn from 0.01× on a log axis. */
function chartsOf(h: SloHistory) {
  const range = { fromMs: Date.parse(h.from), toMs: Date.parse(h.to) };
  let max = 0;
  const lines = h.burn.lines.map((l) => {
    const values = l.values.map((v) => (v === null ? null : Math.max(0.01, v)));
    for (const v of values) if (v !== null && v > max) max = v;
    return {
      key: l.window,
      label: `${l.window} (alerts ≥ ${formatFactor(l.factor)})`,
      colorVar: BURN_COLORS[l.window] ?? '--line-p50',
      values,
    };
  });
  const thresholds = h.burn.lines
    .filter((l) => l.enabled)
    .map((l) => ({
      value: l.factor,
      colorVar: BURN_COLORS[l.window] ?? '--line-p50',
      label: `${formatFactor(l.factor)} ${l.severity} (${l.window})`,
    }));
  const budgetValues = h.budget.values;
  const min = Math.min(0, ...budgetValues.filter((v): v is number => v !== null));
  return {
    range,
    burn: { x: h.burn.t.map((t) => t / 1000), lines, thresholds, max },
    budget: {
      x: h.budget.t.map((t) => t / 1000),
      values: budgetValues,
      yRange: [Math.floor(min * 10) / 10 - 0.05, 1.05] as [number, number],
    },
  };
}

function formatSpan(ms: number): string {
  const h = ms / 3_600_000;
  if (h < 1) return `${Math.round(ms / 60_000)} min`;
  if (h < 48) return `${h.toFixed(1)} h`;
  return `${(h / 24).toFixed(1)} days`;
}
