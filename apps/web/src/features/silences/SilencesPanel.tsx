import { useState } from 'react';
import { useSilenceAction, useSilences } from './api.ts';
import { SilenceDurationField } from '../../components/OnCallActions.tsx';
import { formatInstant } from '../../state/timeRange.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';

/** Silences: what is held back from paging and until when; create one, end one now. */
export function SilencesPanel() {
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
        <SilenceDurationField label="For" duration={duration} setDuration={setDuration} />
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
