import { useState } from 'react';
import { useWebhookChange } from './api.ts';
import { AuthFields, authOf, useAuthDraft } from './AuthFields.tsx';
import { isOneOf, SEVERITIES, type Severity, type Webhook } from '@onset/contract';

/** Change a webhook's name, URL, what it is sent and whether it is on. */
export function WebhookEdit({ w, onDone }: { w: Webhook; onDone: () => void }) {
  const change = useWebhookChange();
  const [name, setName] = useState(w.name ?? '');
  // The server shows the URL with its token masked: the field stays empty unless a new URL is typed.
  const [url, setUrl] = useState('');
  const [minSeverity, setMinSeverity] = useState<Severity>(w.min_severity);
  const [enabled, setEnabled] = useState(w.enabled);
  const [auth, setAuth] = useAuthDraft('keep');
  return (
    <form
      className="webhook-edit"
      aria-label={`Edit webhook ${w.name || w.url}`}
      onSubmit={(e) => {
        e.preventDefault();
        change.mutate(
          {
            id: w.id,
            update: {
              name,
              ...(url ? { url } : {}),
              min_severity: minSeverity,
              enabled,
              ...(authOf(auth, true) ? { auth: authOf(auth, true) } : {}),
            },
          },
          { onSuccess: onDone },
        );
      }}
    >
      <label>
        Name <input name="name" value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        URL{' '}
        <input
          name="url"
          value={url}
          placeholder={`${w.url} (unchanged)`}
          onChange={(e) => setUrl(e.target.value)}
        />
      </label>
      <label>
        Sends{' '}
        <select
          name="min_severity"
          value={minSeverity}
          onChange={(e) => isOneOf(SEVERITIES, e.target.value) && setMinSeverity(e.target.value)}
        >
          <option value="ticket">pages and tickets</option>
          <option value="page">pages only</option>
        </select>
      </label>
      <AuthFields draft={auth} onChange={setAuth} current={w.auth ?? null} />
      <label>
        <input
          type="checkbox"
          name="enabled"
          checked={enabled}
          onChange={(e) => setEnabled(e.target.checked)}
        />{' '}
        enabled
      </label>
      <button type="submit" className="btn" disabled={change.isPending}>
        Save
      </button>
      {change.error ? (
        <div className="small warn" role="alert">
          Could not save: {(change.error as Error).message}
        </div>
      ) : null}
    </form>
  );
}
