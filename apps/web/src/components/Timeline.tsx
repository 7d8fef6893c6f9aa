/** One lifecycle, as the server computed it: detected → alerted → notified → acknowledged → resolved. */
import type { TimelineEntry } from '@onset/contract';
import { formatInstant } from '../lib/time.ts';
import { failureText } from './Delivery.tsx';

const who = (e: TimelineEntry) => e.webhook_name || (e.webhook_id ? `webhook ${e.webhook_id}` : '');

/** The words for one step. */
export function timelineText(e: TimelineEntry): string {
  const by = e.actor ? ` by ${e.actor}` : '';
  const d = e.detail ?? {};
  const resolve = d.event === 'resolved';
  switch (e.kind) {
    case 'detected':
      return `detected${d.onset ? ` (onset ${formatInstant(Date.parse(String(d.onset)))})` : ''}`;
    case 'alerted':
      return `alerted (${String(d.severity ?? 'alert')}${d.burn_rate ? `, burn ${String(d.burn_rate)}× over ${String(d.window ?? '?')}` : ''})${e.alert_id ? ` · alert ${e.alert_id}` : ''}`;
    case 'silenced':
      return `silenced${by}${d.ends_at ? ` until ${formatInstant(Date.parse(String(d.ends_at)))}` : ''}`;
    case 'silence_ended':
      return `silence ended${by}`;
    case 'notified':
      return resolve ? `told ${who(e)} it resolved ✓` : `paged ${who(e)} ✓`;
    case 'notify_failing':
      return `${resolve ? 'resolve ' : ''}delivery to ${who(e)} failing (${failureText({ last_status_code: e.status_code, last_error: e.error })})`;
    case 'notify_pending':
      return `${resolve ? 'resolve ' : ''}delivery to ${who(e)} queued`;
    case 'reopened':
      return `reopened${by}${e.alert_id ? ` · alert ${e.alert_id}` : ''}`;
    case 'acknowledged':
      return `acknowledged${by}`;
    case 'resolved':
      return `resolved${by}${!e.actor && d.reason ? ` (${String(d.reason)})` : ''}`;
    default:
      return e.kind;
  }
}

export function Timeline({ entries }: { entries: TimelineEntry[] }) {
  if (!entries.length) return <p className="muted">No recorded events.</p>;
  return (
    <ol className="event-list timeline" data-testid="timeline">
      {entries.map((e, i) => (
        <li key={i} data-kind={e.kind} className={e.kind === 'notify_failing' ? 'warn' : undefined}>
          <span className="muted small">{formatInstant(Date.parse(e.at), true)}</span>{' '}
          <b>{timelineText(e)}</b>
          {e.comment ? <span className="timeline-comment"> — “{e.comment}”</span> : null}
        </li>
      ))}
    </ol>
  );
}
