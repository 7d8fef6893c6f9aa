/** Alert webhooks: create, edit, delete, test send, receiver health and the delivery log. */
import { useState } from 'react';
import { useTestWebhook, useWebhookChange, useWebhooks } from './api.ts';
import type { Delivery, Webhook } from '@onset/contract';
import { useUrlState } from '../../state/url.ts';
import { formatInstant } from '../../state/timeRange.ts';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';
import { NewWebhook } from './NewWebhook.tsx';
import { WebhookEdit } from './WebhookEdit.tsx';
import { AuthShown } from './AuthFields.tsx';
import { DeliveryLog } from './DeliveryLog.tsx';

export function WebhooksPanel() {
  const { get, set } = useUrlState();
  const hooks = useWebhooks();
  const selected = get('webhook') || hooks.data?.[0]?.id || '';
  return (
    <Panel title="Alert webhooks">
      <p className="muted small">
        Onset sends every alert state change (firing, resolved) for SLO burns and new regressions,
        stored before sending and retried until the receiver answers 2xx. Formats: generic JSON
        signed with <code>X-Onset-Signature</code>, Slack, PagerDuty Events v2, Alertmanager.
      </p>
      <NewWebhook onCreated={(id) => set({ webhook: id })} />
      {hooks.data === undefined ? (
        hooks.error ? (
          <ErrorState error={hooks.error} what="webhooks" onRetry={() => hooks.refetch()} />
        ) : (
          <Loading label="Loading webhooks…" height={80} />
        )
      ) : hooks.data.length === 0 ? (
        <Empty title="No webhook yet">Nobody is paged. Add one above, then send a test.</Empty>
      ) : (
        <>
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Receiver</th>
                <th scope="col">Format</th>
                <th scope="col">Sends</th>
                <th scope="col">Receiver health</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {hooks.data.map((w) => (
                <WebhookRow
                  key={w.id}
                  w={w}
                  selected={w.id === selected}
                  onSelect={() => set({ webhook: w.id })}
                />
              ))}
            </tbody>
          </table>
          {selected ? (
            <DeliveryLog
              webhookId={selected}
              name={
                hooks.data.find((w) => w.id === selected)?.name ||
                hooks.data.find((w) => w.id === selected)?.url ||
                ''
              }
            />
          ) : null}
        </>
      )}
    </Panel>
  );
}

function WebhookRow({
  w,
  selected,
  onSelect,
}: {
  w: Webhook;
  selected: boolean;
  onSelect: () => void;
}) {
  const test = useTestWebhook();
  const change = useWebhookChange();
  const [editing, setEditing] = useState(false);
  const result = test.data as Delivery | undefined;
  const h = w.health;
  const remove = () => {
    if (!globalThis.confirm(`Delete the webhook ${w.name || w.url} and its delivery log?`)) return;
    change.mutate({ id: w.id, update: 'delete' });
  };
  return (
    <tr
      className={selected ? 'highlight' : ''}
      data-webhook-id={w.id}
      data-health={h?.state ?? 'unknown'}
    >
      <td>
        <div>{w.name || <span className="mono">{w.url}</span>}</div>
        {w.name ? <div className="muted small mono">{w.url}</div> : null}
        {w.enabled === false ? <span className="tag">disabled</span> : null}
      </td>
      <td>
        {w.format}
        {w.has_secret ? <div className="muted small">signed</div> : null}
        <AuthShown auth={w.auth} />
      </td>
      <td>{w.min_severity === 'ticket' ? 'pages and tickets' : 'pages only'}</td>
      <td data-testid="webhook-health">
        {h?.state === 'failing' ? (
          <span className="warn">
            <b>failing</b>
            {h.failing_since ? ` since ${formatInstant(Date.parse(h.failing_since))}` : ''} (
            {h.last_status_code ?? h.last_error ?? 'no answer'}) · {h.failed_attempts} failed
            attempt{h.failed_attempts === 1 ? '' : 's'}
            {h.last_error && h.last_status_code ? (
              <div className="small">{h.last_error}</div>
            ) : null}
          </span>
        ) : h?.state === 'ok' ? (
          <span>
            ok ✓
            {h.last_delivered_at ? (
              <span className="muted small">
                {' '}
                last delivered {formatInstant(Date.parse(h.last_delivered_at))}
              </span>
            ) : null}
          </span>
        ) : (
          <span className="muted">nothing sent yet</span>
        )}
      </td>
      <td>
        {editing ? <WebhookEdit w={w} onDone={() => setEditing(false)} /> : null}
        <div className="row gap wrap">
          <button type="button" className="btn" onClick={() => setEditing((e) => !e)}>
            {editing ? 'Cancel' : 'Edit'}
          </button>
          <button type="button" className="btn" onClick={remove} disabled={change.isPending}>
            Delete
          </button>
          <button
            type="button"
            className="btn"
            onClick={() => test.mutate(w.id)}
            disabled={test.isPending}
          >
            {test.isPending ? 'Sending…' : 'Send test'}
          </button>
          <button type="button" className="btn" onClick={onSelect} aria-pressed={selected}>
            Delivery log
          </button>
        </div>
        {result ? (
          <div
            className={`small ${result.status === 'delivered' ? 'ok-text' : 'warn'}`}
            role="status"
          >
            Test {result.status}
            {result.last_status_code ? ` (HTTP ${result.last_status_code})` : ''}
            {result.last_error ? `: ${result.last_error}` : ''}
          </div>
        ) : test.error ? (
          <div className="small warn" role="alert">
            Test failed: {(test.error as Error).message}
          </div>
        ) : null}
        {change.error ? (
          <div className="small warn" role="alert">
            Could not delete: {(change.error as Error).message}
          </div>
        ) : null}
      </td>
    </tr>
  );
}
