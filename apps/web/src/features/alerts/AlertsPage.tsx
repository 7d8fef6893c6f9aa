/**
 * The alerts inbox: every alert that is firing now, whatever the time range
 * (acknowledged and silenced ones too), pages first, oldest first. Each
 * row says since when, which receiver confirmed it (✓), failed (✗) or has
 * not been tried yet (…), loudly when nobody was reached, whether it was
 * reopened, who acknowledged it, the silence that holds it, and the
 * regression or SLO behind it (for an SLO, the open regressions on series it
 * watches). Several selected alerts are acknowledged or silenced at once
 * (BulkActions). All from the API: GET /api/v1/alerts, the regressions and
 * which SLOs watch their series.
 */
import { useMemo, useState } from 'react';
import { Link } from 'react-router-dom';
import type { Alert, AlertNotification, Regression } from '@onset/contract';
import { useAlerts } from './api.ts';
import { BulkActions } from './BulkActions.tsx';
import { useBurningRegressions } from './burning.ts';
import { formatInstant } from '../../lib/time.ts';
import { formatAgo } from '../../state/timeRange.ts';
import { linkWithGlobals, useUrlState } from '../../state/url.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { SilenceNote } from '../../components/SilenceNote.tsx';
import { failureText } from '../../components/Delivery.tsx';

const bySeverityThenAge = (a: Alert, b: Alert) =>
  Number(a.severity !== 'page') - Number(b.severity !== 'page') ||
  Date.parse(a.started_at) - Date.parse(b.started_at);

export default function AlertsPage() {
  const alerts = useAlerts({ status: 'firing', limit: 1000 });
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const list = useMemo(() => [...(alerts.data ?? [])].sort(bySeverityThenAge), [alerts.data]);
  const burning = useBurningRegressions(list);
  if (alerts.data === undefined)
    return (
      <div className="page">
        {alerts.error ? (
          <ErrorState error={alerts.error} what="alerts" onRetry={() => alerts.refetch()} />
        ) : (
          <Loading label="Loading alerts…" height={200} />
        )}
      </div>
    );
  // What is selected and still firing (a selected alert that resolved meanwhile drops out).
  const chosen = list.filter((a) => selected.has(a.id));
  const all = list.length > 0 && chosen.length === list.length;
  const toggle = (id: string, on: boolean) =>
    setSelected((cur) => {
      const next = new Set(cur);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  return (
    <div className="page alerts-page">
      <div className="page-head">
        <h1>Alerts firing</h1>
        <p className="muted" data-testid="alerts-count">
          {list.length === 0
            ? 'Nothing is firing.'
            : `${list.length} firing, whatever the time range (acknowledged and silenced too)`}
        </p>
      </div>
      {list.length ? (
        <>
          <BulkActions selected={chosen} onDone={() => setSelected(new Set())} />
          <div className="table-scroll">
            <table className="table alerts-inbox" data-testid="alerts-inbox">
              <thead>
                <tr>
                  <th scope="col">
                    <input
                      type="checkbox"
                      aria-label="Select every alert"
                      checked={all}
                      ref={(el) => {
                        if (el) el.indeterminate = chosen.length > 0 && !all;
                      }}
                      onChange={(e) =>
                        setSelected(e.target.checked ? new Set(list.map((a) => a.id)) : new Set())
                      }
                    />
                  </th>
                  <th scope="col">Severity</th>
                  <th scope="col">Alert</th>
                  <th scope="col">Since</th>
                  <th scope="col">Receivers</th>
                  <th scope="col">Acknowledged</th>
                  <th scope="col">Silenced</th>
                  <th scope="col">Behind it</th>
                </tr>
              </thead>
              <tbody>
                {list.map((a) => (
                  <AlertRow
                    key={a.id}
                    a={a}
                    checked={selected.has(a.id)}
                    onCheck={(on) => toggle(a.id, on)}
                    burning={a.slo_id ? (burning.get(a.slo_id) ?? []) : []}
                  />
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </div>
  );
}

const receiverMark = (n: AlertNotification) =>
  n.state === 'delivered' ? '✓' : n.state === 'pending' ? '…' : '✗';

function receiverTitle(n: AlertNotification): string {
  switch (n.state) {
    case 'delivered':
      return `delivered ${n.delivered_at ?? ''}`;
    case 'pending':
      return 'queued, not tried yet';
    case 'gave_up':
      return `gave up after ${n.attempts} attempts (${failureText(n)})`;
    default:
      return `failing since ${n.failing_since ?? ''} (${failureText(n)})`;
  }
}

function AlertRow({
  a,
  checked,
  onCheck,
  burning,
}: {
  a: Alert;
  checked: boolean;
  onCheck: (on: boolean) => void;
  burning: Regression[];
}) {
  const { params } = useUrlState();
  const started = Date.parse(a.started_at);
  const firing = a.notifications.filter((n) => n.event === 'firing');
  const nobody = a.paging.delivered === 0 && a.paging.state !== 'silenced';
  const regressionLink = (id: string, label: string) => (
    <Link
      to={linkWithGlobals(`/regressions/${encodeURIComponent(id)}`, params, {
        from: null,
        to: null,
      })}
    >
      {label}
    </Link>
  );
  return (
    <tr
      data-alert-id={a.id}
      data-paging={a.paging.state}
      className={[nobody ? 'warn' : '', checked ? 'selected' : ''].join(' ').trim() || undefined}
    >
      <td>
        <input
          type="checkbox"
          aria-label={`Select alert ${a.id}: ${a.title}`}
          checked={checked}
          onChange={(e) => onCheck(e.target.checked)}
          data-testid="select-alert"
        />
      </td>
      <td>
        <span className={`alert-pill sev-${a.severity}`}>{a.severity}</span>
      </td>
      <td>
        <Link to={linkWithGlobals(`/alerts/${encodeURIComponent(a.id)}`, params)}>{a.title}</Link>
        {a.reopened ? (
          <div className="small" data-testid="reopened" title={a.reopened.at}>
            <span className="status-pill status-reopened">reopened</span>{' '}
            {formatInstant(Date.parse(a.reopened.at))}
            {a.reopened.by ? ` by ${a.reopened.by}` : ''}
            {a.reopened.comment ? `: “${a.reopened.comment}”` : ''}
          </div>
        ) : null}
      </td>
      <td title={a.started_at}>
        {formatInstant(started)}{' '}
        <span className="muted small">({formatAgo(started, Date.now())})</span>
      </td>
      <td data-testid="receivers">
        {firing.map((n) => (
          <span
            key={n.webhook_id}
            className={n.state === 'delivered' ? 'ok' : n.state === 'pending' ? 'muted' : 'warn'}
            data-webhook-id={n.webhook_id}
            data-state={n.state}
            title={receiverTitle(n)}
          >
            {n.webhook_name || `webhook ${n.webhook_id}`} {receiverMark(n)}{' '}
          </span>
        ))}
        {a.paging.state === 'silenced' && !firing.length ? (
          <span className="muted" data-testid="not-paged-silenced">
            not paged: silenced
          </span>
        ) : null}
        {nobody ? (
          <strong className="nobody-reached" role="alert" data-testid="nobody-reached">
            nobody was reached
          </strong>
        ) : null}
      </td>
      <td data-testid="acknowledged">
        {a.acknowledged
          ? `by ${a.acknowledged.by ?? 'someone'} ${formatAgo(Date.parse(a.acknowledged.at), Date.now())}`
          : '–'}
      </td>
      <td>{a.silence ? <SilenceNote s={a.silence} /> : '–'}</td>
      <td data-testid="behind">
        {a.regression_id ? (
          regressionLink(a.regression_id, `regression ${a.regression_id}`)
        ) : a.slo_id ? (
          <>
            <Link to={linkWithGlobals(`/slos/${encodeURIComponent(a.slo_id)}`, params)}>
              SLO {String(a.details.slo_name ?? a.slo_id)}
            </Link>
            {burning.map((r) => (
              <div key={r.id} className="small" data-testid="burning-regression">
                burnt by{' '}
                {regressionLink(r.id, `regression ${r.id}: ${r.service} ${r.op} ${r.name}`)}
              </div>
            ))}
          </>
        ) : (
          '–'
        )}
      </td>
    </tr>
  );
}
