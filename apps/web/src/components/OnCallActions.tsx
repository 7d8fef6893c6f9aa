/**
 * Acknowledge / silence / resolve with who and why, for the alert page and
 * the regression page. The name is remembered in this browser.
 */
import { useState, type ReactNode } from 'react';

const NAME_KEY = 'onset.oncall.name';

/** The on-call name this browser remembers (every on-call form starts with it). */
export function storedName(): string {
  try {
    return localStorage.getItem(NAME_KEY) ?? '';
  } catch {
    return '';
  }
}

/** Remember the on-call name in this browser. */
export function rememberName(by: string): void {
  try {
    localStorage.setItem(NAME_KEY, by.trim());
  } catch {
    /* private mode */
  }
}

export interface Who {
  by: string;
  comment: string;
}

/** The silence durations offered, as the API's duration text. */
export const SILENCE_DURATIONS = ['30m', '1h', '2h', '4h', '8h', '1d', '3d'] as const;

export function OnCallActions({
  busy,
  error,
  canAck,
  canResolve,
  onAck,
  onResolve,
  onSilence,
  silenceWhat,
  extra,
}: {
  busy: boolean;
  error: unknown;
  canAck: boolean;
  canResolve: boolean;
  onAck: (w: Who) => void;
  onResolve: (w: Who) => void;
  /** Omit where silencing does not apply. */
  onSilence?: (w: Who & { duration: string }) => void;
  /** What a silence would match, in words. */
  silenceWhat?: string;
  extra?: ReactNode;
}) {
  const [by, setBy] = useState(storedName);
  const [comment, setComment] = useState('');
  const [duration, setDuration] = useState<string>('2h');
  const who = (): Who => {
    rememberName(by);
    return { by: by.trim(), comment: comment.trim() };
  };
  return (
    <form className="oncall-actions" aria-label="Act on it" onSubmit={(e) => e.preventDefault()}>
      <div className="row gap wrap">
        <WhoFields by={by} setBy={setBy} comment={comment} setComment={setComment} />
      </div>
      <div className="row gap wrap">
        <button
          type="button"
          className="btn"
          disabled={busy || !canAck}
          onClick={() => onAck(who())}
        >
          Acknowledge
        </button>
        {onSilence ? (
          <>
            <SilenceDurationField
              label="Silence for"
              duration={duration}
              setDuration={setDuration}
            />
            <button
              type="button"
              className="btn"
              disabled={busy || !comment.trim()}
              title={
                comment.trim()
                  ? `Silence ${silenceWhat ?? 'this alert'} for ${duration}`
                  : 'Say why in the comment to silence'
              }
              onClick={() => onSilence({ ...who(), duration })}
            >
              Silence
            </button>
          </>
        ) : null}
        <button
          type="button"
          className="btn"
          disabled={busy || !canResolve}
          onClick={() => onResolve(who())}
        >
          Resolve
        </button>
        {extra}
      </div>
      {onSilence && silenceWhat ? (
        <p className="muted small">A silence holds back new pages for {silenceWhat}.</p>
      ) : null}
      {error ? (
        <p className="warn" role="alert">
          Could not do that: {(error as Error).message}
        </p>
      ) : null}
    </form>
  );
}

/** Who acts and why: the name (remembered by the caller) and the comment every on-call action carries. */
export function WhoFields({
  by,
  setBy,
  comment,
  setComment,
}: {
  by: string;
  setBy: (v: string) => void;
  comment: string;
  setComment: (v: string) => void;
}) {
  return (
    <>
      <label>
        Your name{' '}
        <input
          name="by"
          value={by}
          onChange={(e) => setBy(e.target.value)}
          placeholder="who is on it"
          maxLength={200}
          autoComplete="name"
        />
      </label>
      <label className="grow">
        Comment{' '}
        <input
          name="comment"
          value={comment}
          onChange={(e) => setComment(e.target.value)}
          placeholder="why (optional; required to silence)"
          maxLength={2000}
        />
      </label>
    </>
  );
}

/** The silence length picker every silencing form shows ("Silence for", "For"). */
export function SilenceDurationField({
  label,
  duration,
  setDuration,
}: {
  label: string;
  duration: string;
  setDuration: (v: string) => void;
}) {
  return (
    <label>
      {label}{' '}
      <select name="duration" value={duration} onChange={(e) => setDuration(e.target.value)}>
        {SILENCE_DURATIONS.map((d) => (
          <option key={d} value={d}>
            {d}
          </option>
        ))}
      </select>
    </label>
  );
}
