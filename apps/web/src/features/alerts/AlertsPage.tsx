/**
 * The alerts inbox: every alert that is firing now, whatever the time range
 * (acknowledged and silenced ones too), most severe and oldest first. Each
 * row says since when, which receiver confirmed it (✓) or not (✗), loudly
 * when nobody was reached, who acknowledged it, the silence that holds it,
 * and the regression or SLO behind it. All from GET /api/v1/alerts.
 */
import { Link } from 'react-router-dom';
import type { Alert } from '@onset/contract';
import { useAlerts } from './api.ts';
import { formatInstant } from '../../lib/time.ts';
import { formatAgo } from '../../state/timeRange.ts';
import { linkWithGlobals, useUrlState } from '../../state/url.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { SilenceNote } from '../../components/SilenceNote.tsx';

const bySeverityThenAge = (a: Alert, b: Alert) =>
  Number(a.severity !== 'page') - Number(b.severity !== 'page') ||
  Date.parse(a.started_at) - Date.parse(b.started_at);

export default function AlertsPage() {
  const alerts = useAlerts({ status: 'firing', limit: 1000 });
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
  const list = [...alerts.data].sort(bySeverityThenAge);
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
        <table className="table alerts-inbox" data-testid="alerts-inbox">
          <thead>
            <tr>
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
              <AlertRow key={a.id} a={a} />
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

function AlertRow({ a }: { a: Alert }) {
  const { params } = useUrlState();
  const started = Date.parse(a.started_at);
  const firing = a.notifications.filter((n) => n.event === 'firing');
  const nobody = a.paging.delivered === 0 && a.paging.state !== 'silenced';
  return (
    <tr data-alert-id={a.id} className={nobody ? 'warn' : undefined}>
      <td>
        <span className={`alert-pill sev-${a.severity}`}>{a.severity}</span>
      </td>
      <td>
        <Link to={linkWithGlobals(`/alerts/${encodeURIComponent(a.id)}`, params)}>{a.title}</Link>
      </td>
      <td title={a.started_at}>
        {formatInstant(started)}{' '}
        <span className="muted small">({formatAgo(started, Date.now())})</span>
      </td>
      <td data-testid="receivers">
        {firing.map((n) => (
          <span
            key={n.webhook_id}
            className={n.state === 'delivered' ? 'ok' : 'warn'}
            data-webhook-id={n.webhook_id}
            data-state={n.state}
          >
            {n.webhook_name || `webhook ${n.webhook_id}`} {n.state === 'delivered' ? '✓' : '✗'}{' '}
          </span>
        ))}
        {nobody ? (
          <strong className="nobody-reached" role="alert" data-testid="nobody-reached">
            nobody was reached
          </strong>
        ) : null}
      </td>
      <td>
        {a.acknowledged
          ? `by ${a.acknowledged.by ?? 'someone'} ${formatAgo(Date.parse(a.acknowledged.at), Date.now())}`
          : '–'}
      </td>
      <td>{a.silence ? <SilenceNote s={a.silence} /> : '–'}</td>
      <td>
        {a.regression_id ? (
          <Link
            to={linkWithGlobals(`/regressions/${encodeURIComponent(a.regression_id)}`, params, {
              from: null,
              to: null,
            })}
          >
            regression {a.regression_id}
          </Link>
        ) : a.slo_id ? (
          <Link to={linkWithGlobals(`/slos/${encodeURIComponent(a.slo_id)}`, params)}>
            SLO {String(a.details.slo_name ?? a.slo_id)}
          </Link>
        ) : (
          '–'
        )}
      </td>
    </tr>
  );
}
