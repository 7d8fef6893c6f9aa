/**
 * The inbox's bulk actions: acknowledge, or silence for a duration, every
 * selected alert with one request (POST /api/v1/alerts/ack, /alerts/silence).
 * What was done is confirmed (role=status) with the API's answer — each
 * silence's end and author — and focus moves to that confirmation, so a
 * keyboard user is not dropped on <body> when the buttons disable.
 */
import { useEffect, useRef, useState } from 'react';
import type { Alert } from '@onset/contract';
import { useBulkAlertAction } from './api.ts';
import {
  rememberName,
  SilenceDurationField,
  storedName,
  WhoFields,
} from '../../components/OnCallActions.tsx';
import { SilenceConfirmation } from '../../components/SilenceNote.tsx';

export function BulkActions({
  selected,
  onDone,
}: {
  selected: readonly Alert[];
  onDone: () => void;
}) {
  const action = useBulkAlertAction();
  const [by, setBy] = useState(storedName);
  const [comment, setComment] = useState('');
  const [duration, setDuration] = useState<string>('2h');
  const done = useRef<HTMLDivElement>(null);
  const result = action.data;
  useEffect(() => {
    if (result) done.current?.focus();
  }, [result]);
  const ids = selected.map((a) => a.id);
  const n = ids.length;
  const busy = action.isPending;
  const run = (op: 'ack' | 'silence') => {
    rememberName(by);
    const who = by.trim() || undefined;
    const why = comment.trim();
    action.mutate(
      op === 'ack'
        ? { action: 'ack', body: { ids, by: who, ...(why ? { comment: why } : {}) } }
        : { action: 'silence', body: { ids, duration, comment: why, created_by: who } },
      {
        onSuccess: () => {
          setComment('');
          onDone();
        },
      },
    );
  };
  return (
    <form
      className="oncall-actions bulk-actions"
      aria-label="Act on the selected alerts"
      data-testid="bulk-actions"
      onSubmit={(e) => e.preventDefault()}
    >
      <div className="row gap wrap">
        <strong data-testid="selected-count">
          {n === 0 ? 'Select alerts to act on several at once' : `${n} selected`}
        </strong>
        <WhoFields by={by} setBy={setBy} comment={comment} setComment={setComment} />
      </div>
      <div className="row gap wrap">
        <button type="button" className="btn" disabled={busy || n === 0} onClick={() => run('ack')}>
          Acknowledge selected
        </button>
        <SilenceDurationField label="Silence for" duration={duration} setDuration={setDuration} />
        <button
          type="button"
          className="btn"
          disabled={busy || n === 0 || !comment.trim()}
          title={comment.trim() ? undefined : 'Say why in the comment to silence'}
          onClick={() => run('silence')}
        >
          Silence selected
        </button>
      </div>
      {action.error ? (
        <p className="warn" role="alert">
          Could not do that: {(action.error as Error).message}
        </p>
      ) : null}
      {result && !busy && !action.error ? (
        <div ref={done} tabIndex={-1} data-testid="bulk-done" data-action={result.action}>
          {result.action === 'ack' ? (
            <p role="status" className="silence-confirmation">
              Acknowledged {result.alerts.length} {result.alerts.length === 1 ? 'alert' : 'alerts'}
              {result.alerts[0]?.acknowledged?.by
                ? ` as ${result.alerts[0].acknowledged.by}`
                : ''}: {result.alerts.map((a) => `alert ${a.id}`).join(', ')}.
            </p>
          ) : (
            result.silences.map((s) => (
              <SilenceConfirmation
                key={s.id}
                s={s}
                what={
                  s.slo_id
                    ? `SLO ${s.slo_id}`
                    : [s.service, s.op].filter(Boolean).join(' ') || 'these alerts'
                }
              />
            ))
          )}
        </div>
      ) : null}
    </form>
  );
}
