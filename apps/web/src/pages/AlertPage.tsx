/** One alert and its history (firing, notified, silenced, acknowledged, resolved): where generic alert links land. */
import { Link, useParams } from 'react-router-dom';
import { useAlert } from '../api/queries.ts';
import { linkWithGlobals, useUrlState } from '../state/url.ts';
import { formatAgo, formatInstant } from '../state/timeRange.ts';
import { ErrorState, Loading } from '../components/States.tsx';
import { Panel } from '../components/Controls.tsx';
import { formatBurn } from './slos/sloParts.tsx';

export default function AlertPage() {
  const { id } = useParams();
  const { params } = useUrlState();
  const alert = useAlert(id);
  if (alert.data === undefined)
    return (
      <div className="page">
        {alert.error ? (
          <ErrorState error={alert.error} what={`alert ${id}`} />
        ) : (
          <Loading label="Loading the alert…" height={200} />
        )}
      </div>
    );
  const a = alert.data;
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>{a.title || `Alert ${a.id}`}</h1>
          <p className="muted">
            <span className={`alert-pill sev-${a.severity}`}>{a.severity}</span> {a.status} ·
            started {formatInstant(Date.parse(a.started_at))} (
            {formatAgo(Date.parse(a.started_at), Date.now())})
            {a.resolved_at ? ` · resolved ${formatInstant(Date.parse(a.resolved_at))}` : ''}
            {a.burn_rate !== null && a.burn_rate !== undefined
              ? ` · burn ${formatBurn(a.burn_rate)} over ${a.window ?? '?'}`
              : ''}
          </p>
        </div>
        <div className="row gap">
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
      <Panel title="History">
        {a.events?.length ? (
          <ol className="event-list">
            {a.events.map((e, i) => (
              <li key={i}>
                <b>{e.kind}</b> {formatInstant(Date.parse(e.at), true)}
                {e.actor ? <span className="muted"> by {e.actor}</span> : null}
              </li>
            ))}
          </ol>
        ) : (
          <p className="muted">No recorded events.</p>
        )}
      </Panel>
    </div>
  );
}
