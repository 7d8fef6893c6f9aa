import { useDeliveries } from './api.ts';
import { formatAgo, formatInstant } from '../../state/timeRange.ts';
import { ErrorState, Loading } from '../../components/States.tsx';

export function DeliveryLog({ webhookId, name }: { webhookId: string; name: string }) {
  const log = useDeliveries(webhookId);
  const now = Date.now();
  return (
    <div className="delivery-log">
      <h3>Delivery log: {name}</h3>
      {log.data === undefined ? (
        log.error ? (
          <ErrorState error={log.error} what="the delivery log" />
        ) : (
          <Loading label="Loading deliveries…" height={60} />
        )
      ) : log.data.length === 0 ? (
        <p className="muted">Nothing sent yet. Use "Send test".</p>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
            </tr>
          </thead>
          <tbody>
            {log.data.map((d) => (
              <tr key={d.id}>
                <td>
                  {formatInstant(Date.parse(d.created_at), true)}
                  <div className="muted small">{formatAgo(Date.parse(d.created_at), now)}</div>
                </td>
                <td>
                  {d.event}
                  {d.dedup_key ? <div className="muted small mono">{d.dedup_key}</div> : null}
                </td>
                <td>
                  <span className={`delivery-${d.status}`}>{d.status}</span>
                  {d.status === 'pending' && d.next_attempt_at ? (
                    <div className="muted small">
                      next try {formatInstant(Date.parse(d.next_attempt_at), true)}
                    </div>
                  ) : null}
                </td>
                <td>{d.attempts}</td>
                <td>
                  {d.last_status_code ? `HTTP ${d.last_status_code}` : '–'}
                  {d.last_error ? <div className="muted small">{d.last_error}</div> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
