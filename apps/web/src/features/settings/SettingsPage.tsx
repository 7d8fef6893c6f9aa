/** Settings: alert webhooks (create, edit, delete, test send, receiver health, delivery log), silences, and the API token of this browser. */
import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import {
  useCreateWebhook,
  useDeliveries,
  useSilenceAction,
  useSilences,
  useTestWebhook,
  useWebhookChange,
  useWebhooks,
} from '../../api/queries.ts';
import { SILENCE_DURATIONS } from '../../components/OnCallActions.tsx';
import { ApiError, apiFetch, getToken, setToken } from '../../api/client.ts';
import {
  isOneOf,
  SEVERITIES,
  WEBHOOK_FORMATS,
  type Delivery,
  type Severity,
  type Webhook,
  type WebhookFormat,
} from '@onset/contract';
import { useUrlState } from '../../state/url.ts';
import { formatAgo, formatInstant } from '../../state/timeRange.ts';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';

export default function SettingsPage() {
  return (
    <div className="page">
      <div className="page-head">
        <h1>Settings</h1>
      </div>
      <Webhooks />
      <Silences />
      <TokenSettings />
    </div>
  );
}

function Webhooks() {
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

/** Change a webhook's name, URL, what it is sent and whether it is on. */
function WebhookEdit({ w, onDone }: { w: Webhook; onDone: () => void }) {
  const change = useWebhookChange();
  const [name, setName] = useState(w.name ?? '');
  // The server shows the URL with its token masked: the field stays empty unless a new URL is typed.
  const [url, setUrl] = useState('');
  const [minSeverity, setMinSeverity] = useState<Severity>(w.min_severity);
  const [enabled, setEnabled] = useState(w.enabled);
  return (
    <form
      className="webhook-edit"
      aria-label={`Edit webhook ${w.name || w.url}`}
      onSubmit={(e) => {
        e.preventDefault();
        change.mutate(
          {
            id: w.id,
            update: { name, ...(url ? { url } : {}), min_severity: minSeverity, enabled },
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

/** Silences: what is held back from paging and until when; create one, end one now. */
function Silences() {
  const silences = useSilences();
  const act = useSilenceAction();
  const [service, setService] = useState('');
  const [sloId, setSloId] = useState('');
  const [op, setOp] = useState('');
  const [duration, setDuration] = useState('2h');
  const [comment, setComment] = useState('');
  const [by, setBy] = useState('');
  const now = Date.now();
  const list = silences.data ?? [];
  return (
    <Panel title="Silences">
      <p className="muted small">
        A silence holds back pages for the alerts it matches (every given field must match) until it
        ends; alerts still firing when it ends are sent then.
      </p>
      <form
        className="row gap wrap"
        aria-label="New silence"
        onSubmit={(e) => {
          e.preventDefault();
          act.mutate(
            {
              create: {
                ...(service.trim() ? { service: service.trim() } : {}),
                ...(sloId.trim() ? { slo_id: sloId.trim() } : {}),
                ...(op.trim() ? { op: op.trim() as never } : {}),
                duration,
                comment: comment.trim(),
                ...(by.trim() ? { created_by: by.trim() } : {}),
              },
            },
            { onSuccess: () => setComment('') },
          );
        }}
      >
        <label>
          Service{' '}
          <input name="service" value={service} onChange={(e) => setService(e.target.value)} />
        </label>
        <label>
          SLO id <input name="slo_id" value={sloId} onChange={(e) => setSloId(e.target.value)} />
        </label>
        <label>
          Op <input name="op" value={op} onChange={(e) => setOp(e.target.value)} />
        </label>
        <label>
          For{' '}
          <select name="duration" value={duration} onChange={(e) => setDuration(e.target.value)}>
            {SILENCE_DURATIONS.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
        <label>
          Why <input name="comment" value={comment} onChange={(e) => setComment(e.target.value)} />
        </label>
        <label>
          Your name <input name="by" value={by} onChange={(e) => setBy(e.target.value)} />
        </label>
        <button
          type="submit"
          className="btn"
          disabled={
            act.isPending || !comment.trim() || !(service.trim() || sloId.trim() || op.trim())
          }
        >
          Silence
        </button>
      </form>
      {act.error ? (
        <p className="warn" role="alert">
          {(act.error as Error).message}
        </p>
      ) : null}
      {silences.data === undefined ? (
        silences.error ? (
          <ErrorState error={silences.error} what="silences" onRetry={() => silences.refetch()} />
        ) : (
          <Loading label="Loading silences…" height={60} />
        )
      ) : list.length === 0 ? (
        <p className="muted">No silence.</p>
      ) : (
        <table className="table" data-testid="silences">
          <thead>
            <tr>
              <th scope="col">Matches</th>
              <th scope="col">Why</th>
              <th scope="col">Until</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {list.slice(0, 50).map((x) => (
              <tr key={x.id} data-silence-id={x.id} data-active={x.active}>
                <td>
                  {[
                    x.service ? `service ${x.service}` : '',
                    x.slo_id ? `SLO ${x.slo_id}` : '',
                    x.op ? `op ${x.op}` : '',
                  ]
                    .filter(Boolean)
                    .join(', ')}
                </td>
                <td>
                  {x.comment}
                  {x.created_by ? <div className="muted small">by {x.created_by}</div> : null}
                </td>
                <td>
                  {formatInstant(Date.parse(x.ends_at))}{' '}
                  <span className="muted small">
                    {x.active ? 'active' : Date.parse(x.starts_at) > now ? 'not started' : 'ended'}
                  </span>
                </td>
                <td>
                  {x.active ? (
                    <button
                      type="button"
                      className="btn"
                      disabled={act.isPending}
                      onClick={() => act.mutate({ end: x.id })}
                    >
                      End now
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}

function NewWebhook({ onCreated }: { onCreated: (id: string) => void }) {
  const create = useCreateWebhook();
  const [url, setUrl] = useState('');
  const [name, setName] = useState('');
  const [format, setFormat] = useState<WebhookFormat>('json');
  const [secret, setSecret] = useState('');
  const [routingKey, setRoutingKey] = useState('');
  const [minSeverity, setMinSeverity] = useState<Severity>('page');
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
        });
        setUrl('');
        setName('');
        setSecret('');
        setRoutingKey('');
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

function DeliveryLog({ webhookId, name }: { webhookId: string; name: string }) {
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

type Access = { open: boolean; read: boolean | null; admin: boolean | null; reason?: string };

/** What the current token may do, by asking the API (tokens are configured on the server by ONSET_TOKENS). */
function useAccess(tokenVersion: number) {
  return useQuery<Access>({
    queryKey: ['access', tokenVersion],
    queryFn: async () => {
      const probe = async (path: string) => {
        try {
          await apiFetch(path);
          return { ok: true as const };
        } catch (e) {
          if (e instanceof ApiError && (e.status === 401 || e.status === 403))
            return { ok: false as const, status: e.status, message: e.message };
          if (e instanceof ApiError && e.status === 404) return { ok: true as const };
          throw e;
        }
      };
      // Without any token: does the server run open?
      const anon = await fetch('/api/v1/series?service=__onset_probe__', {
        headers: { Accept: 'application/json' },
      });
      if (anon.ok) return { open: true, read: true, admin: true };
      const read = await probe('/api/v1/series?service=__onset_probe__');
      const admin = await probe('/api/v1/webhooks');
      return {
        open: false,
        read: read.ok,
        admin: admin.ok,
        reason: !read.ok ? read.message : !admin.ok ? admin.message : undefined,
      };
    },
    retry: false,
  });
}

function TokenSettings() {
  const [version, setVersion] = useState(0);
  const [value, setValue] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => setSaved(getToken()), [version]);
  const access = useAccess(version);
  return (
    <Panel title="API token">
      {access.data === undefined ? (
        access.error ? (
          <ErrorState error={access.error} what="token scopes" />
        ) : (
          <Loading label="Checking access…" height={60} />
        )
      ) : access.data.open ? (
        <p data-testid="access">
          <b>This server runs open</b>: it is bound to loopback and no tokens are configured (
          <code>ONSET_TOKENS</code> is empty), so every request has every scope. Bind it to another
          address and it refuses to start until tokens are set.
        </p>
      ) : (
        <div data-testid="access">
          <p>
            Tokens are configured on the server (<code>ONSET_TOKENS="read:…,admin:…"</code>).{' '}
            {saved ? 'The token saved in this browser' : 'Without a token, this browser'} can:
          </p>
          <ul className="scope-list">
            <li className={access.data.read ? 'ok-text' : 'warn'}>
              {access.data.read ? '✓' : '✗'} read: dashboards, series, regressions, SLOs, deploys
            </li>
            <li className={access.data.admin ? 'ok-text' : 'warn'}>
              {access.data.admin ? '✓' : '✗'} admin: SLOs, webhooks, silences, acknowledging
            </li>
            <li className="muted">
              ingest (OTLP) and deploys (CI markers) are for agents and CI, not for this browser
            </li>
          </ul>
          {access.data.reason ? (
            <p className="muted small">Server said: {access.data.reason}</p>
          ) : null}
        </div>
      )}
      <form
        className="row gap wrap"
        onSubmit={(e) => {
          e.preventDefault();
          setToken(value.trim() || null);
          setValue('');
          setVersion((v) => v + 1);
        }}
      >
        <label className="field">
          <span>{saved ? `Saved token …${saved.slice(-4)}; replace with` : 'Bearer token'}</span>
          <input
            type="password"
            autoComplete="off"
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
        </label>
        <button type="submit" className="btn primary">
          Save token
        </button>
        {saved ? (
          <button
            type="button"
            className="btn"
            onClick={() => {
              setToken(null);
              setVersion((v) => v + 1);
            }}
          >
            Forget token
          </button>
        ) : null}
      </form>
    </Panel>
  );
}
