import { useState } from 'react';
import { useCreateWebhook } from './api.ts';
import { AuthFields, authOf, emptyAuth, useAuthDraft } from './AuthFields.tsx';
import {
  isOneOf,
  SEVERITIES,
  WEBHOOK_FORMATS,
  type Severity,
  type WebhookFormat,
} from '@onset/contract';

export function NewWebhook({ onCreated }: { onCreated: (id: string) => void }) {
  const create = useCreateWebhook();
  const [url, setUrl] = useState('');
  const [name, setName] = useState('');
  const [format, setFormat] = useState<WebhookFormat>('json');
  const [secret, setSecret] = useState('');
  const [routingKey, setRoutingKey] = useState('');
  const [minSeverity, setMinSeverity] = useState<Severity>('page');
  const [auth, setAuth] = useAuthDraft('none');
  return (
    <form
      className="form-grid"
      aria-label="New webhook"
      onSubmit={async (e) => {
        e.preventDefault();
        const w = await create.mutateAsync({
          url,
          format,
          name: name || undefined,
          secret: secret || undefined,
          routing_key: routingKey || undefined,
          min_severity: minSeverity,
          auth: authOf(auth, false),
        });
        setUrl('');
        setName('');
        setSecret('');
        setRoutingKey('');
        setAuth(emptyAuth('none'));
        onCreated(w.id);
      }}
    >
      <label className="field wide">
        <span>Receiver URL (http or https)</span>
        <input
          type="url"
          required
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="https://hooks.example.com/onset"
        />
      </label>
      <label className="field">
        <span>Name</span>
        <input value={name} onChange={(e) => setName(e.target.value)} placeholder="on-call pager" />
      </label>
      <label className="field">
        <span>Format</span>
        <select
          value={format}
          onChange={(e) => isOneOf(WEBHOOK_FORMATS, e.target.value) && setFormat(e.target.value)}
        >
          <option value="json">JSON (HMAC signed)</option>
          <option value="slack">Slack</option>
          <option value="pagerduty">PagerDuty Events v2</option>
          <option value="alertmanager">Alertmanager (its API: base URL)</option>
          <option value="alertmanager-webhook">Alertmanager webhook payload</option>
        </select>
      </label>
      {format === 'pagerduty' ? (
        <label className="field">
          <span>Routing key</span>
          <input
            required
            value={routingKey}
            onChange={(e) => setRoutingKey(e.target.value)}
            autoComplete="off"
          />
        </label>
      ) : (
        <label className="field">
          <span>Secret (HMAC)</span>
          <input
            type="password"
            value={secret}
            onChange={(e) => setSecret(e.target.value)}
            autoComplete="new-password"
          />
        </label>
      )}
      <AuthFields draft={auth} onChange={setAuth} />
      <label className="field">
        <span>Send</span>
        <select
          value={minSeverity}
          onChange={(e) => isOneOf(SEVERITIES, e.target.value) && setMinSeverity(e.target.value)}
        >
          <option value="page">pages only</option>
          <option value="ticket">pages and tickets</option>
        </select>
      </label>
      <div className="form-actions">
        <button type="submit" className="btn primary" disabled={create.isPending}>
          {create.isPending ? 'Adding…' : 'Add webhook'}
        </button>
      </div>
      {create.error ? (
        <p className="warn" role="alert">
          Could not add the webhook: {(create.error as Error).message}
        </p>
      ) : null}
    </form>
  );
}
