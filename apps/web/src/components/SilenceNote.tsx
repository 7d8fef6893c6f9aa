/**
 * A silence where its alert or regression is shown: until when, by whom and
 * why, from the API's `silence` (never worked out here).
 */
import type { Silence, SilenceRef } from '@onset/contract';
import { formatInstant } from '../lib/time.ts';

/** "silenced until 14:05 by alice: “rollback in progress”" (or "silence ended 14:05 …"). */
export function SilenceNote({ s, compact = false }: { s: SilenceRef; compact?: boolean }) {
  const until = Date.parse(s.ends_at);
  const who = s.created_by ? ` by ${s.created_by}` : '';
  return (
    <span
      className={`silence-note${s.active ? ' active' : ''}`}
      data-testid="silence-note"
      data-silence-id={s.id}
      data-active={String(s.active)}
      title={`silence ${s.id}${who}: ${s.comment}`}
    >
      {s.active ? '🔕 silenced until ' : 'silence ended '}
      <time dateTime={s.ends_at}>{formatInstant(until)}</time>
      {compact ? null : (
        <>
          {who}: “{s.comment}”
        </>
      )}
    </span>
  );
}

/** What the UI says once a silence is made: what it matches, until when, and that it holds. */
export function SilenceConfirmation({ s, what }: { s: Silence; what: string }) {
  return (
    <p className="silence-confirmation" role="status" data-testid="silence-confirmation">
      Silenced {what} until <time dateTime={s.ends_at}>{formatInstant(Date.parse(s.ends_at))}</time>
      {s.created_by ? ` by ${s.created_by}` : ''} (silence {s.id}): nothing it matches pages until
      then.
    </p>
  );
}
