/**
 * Delivery truth, drawn from what the server computed (alert.paging and
 * alert.notifications): "paged X at 12:03 ✓", "delivery to X failing since
 * 12:03 (503)", "not paged: silenced / no webhook". Never "notified" without
 * a receiver's confirmation. Used by every page that shows an alert.
 */
import type { AlertNotification, AlertPaging } from '@onset/contract';
import { formatInstant } from '../lib/time.ts';

interface Paged {
  paging?: AlertPaging | null;
  notifications?: AlertNotification[] | null;
}

const who = (n: AlertNotification) => n.webhook_name || `webhook ${n.webhook_id}`;

/** Why a delivery is failing, in a few words: the status code, else the error's first part. */
export function failureText(n: Pick<AlertNotification, 'last_status_code' | 'last_error'>): string {
  if (n.last_status_code) return String(n.last_status_code);
  const e = n.last_error ?? 'no answer';
  return e.length > 80 ? `${e.slice(0, 77)}…` : e;
}

/** One line per receiver of the firing (or of the resolve, with `event`). */
export function notificationText(n: AlertNotification): string {
  const what = n.event === 'resolved' ? 'resolve ' : '';
  const at = (s: string | null) => (s ? formatInstant(Date.parse(s)) : '');
  switch (n.state) {
    case 'delivered':
      return n.event === 'resolved'
        ? `told ${who(n)} it resolved at ${at(n.delivered_at)} ✓`
        : `paged ${who(n)} at ${at(n.delivered_at)} ✓`;
    case 'failing':
      return `${what}delivery to ${who(n)} failing since ${at(n.failing_since)} (${failureText(n)}) · ${n.attempts} attempt${n.attempts === 1 ? '' : 's'}`;
    case 'gave_up':
      return `${what}delivery to ${who(n)} gave up after ${n.attempts} attempt${n.attempts === 1 ? '' : 's'} (${failureText(n)})`;
    default:
      return `${what}delivery to ${who(n)} queued, not tried yet`;
  }
}

/**
 * The one-line summary for tables: every receiver of the firing, the worst first
 * ("delivery to X failing since 12:03 (503) · paged Y at 12:03 ✓"), so the page that
 * arrived is never hidden behind the one that did not.
 */
export function pagingText(a: Paged): string {
  const p = a.paging;
  if (!p) return 'delivery unknown';
  if (p.state === 'silenced') return 'not paged: silenced';
  if (p.state === 'no_webhook') return 'not paged: no webhook';
  const rank = (n: AlertNotification) =>
    n.state === 'failing' || n.state === 'gave_up' ? 0 : n.state === 'pending' ? 1 : 2;
  const firing = (a.notifications ?? [])
    .filter((n) => n.event === 'firing')
    .map((n, i) => ({ n, i }))
    .sort((x, y) => rank(x.n) - rank(y.n) || x.i - y.i)
    .map((x) => x.n);
  if (!firing.length) return 'not paged: no webhook';
  return firing.map(notificationText).join(' · ');
}

const tone = (state: string) =>
  state === 'paged' || state === 'delivered' ? 'ok' : state === 'pending' ? 'muted' : 'warn';

/** A compact cell: the summary line, coloured by its state. */
export function PagingBadge({ alert }: { alert: Paged }) {
  const state = alert.paging?.state ?? 'unknown';
  return (
    <span className={`paging ${tone(state)}`} data-testid="paging" data-state={state}>
      {pagingText(alert)}
    </span>
  );
}

/** Every receiver's line (firing first, then resolves), or why nobody was paged. */
export function PagingLines({ alert }: { alert: Paged }) {
  const p = alert.paging;
  const list = [...(alert.notifications ?? [])].sort(
    (a, b) => Number(a.event !== 'firing') - Number(b.event !== 'firing'),
  );
  return (
    <ul className="paging-lines" data-testid="paging-lines" data-state={p?.state ?? 'unknown'}>
      {p?.state === 'silenced' ? (
        <li className="warn">not paged: silenced (silence {p.silenced_by})</li>
      ) : null}
      {!list.length && p?.state !== 'silenced' ? (
        <li className="warn">not paged: no webhook</li>
      ) : null}
      {list.map((n) => (
        <li
          key={`${n.webhook_id}-${n.event}`}
          className={tone(n.state)}
          data-webhook-id={n.webhook_id}
          data-state={n.state}
          title={n.last_error ?? undefined}
        >
          {notificationText(n)}
          {n.state !== 'delivered' && n.last_error && n.last_status_code ? (
            <div className="muted small">{n.last_error}</div>
          ) : null}
        </li>
      ))}
    </ul>
  );
}
