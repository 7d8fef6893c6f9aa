import { Link } from 'react-router-dom';
import { useRegressionTimeline } from './api.ts';
import { linkWithGlobals, useUrlState } from '../../state/url.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';
import { PagingLines } from '../../components/Delivery.tsx';
import { Timeline } from '../../components/Timeline.tsx';

/** The regression's alerts with who was paged, and its lifecycle, as the server computed them. */
export function RegressionAlerts({ id }: { id: string }) {
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
