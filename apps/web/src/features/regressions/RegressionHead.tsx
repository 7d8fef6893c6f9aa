import { Link } from 'react-router-dom';
import type { Regression } from '@onset/contract';
import { useRegressionAction } from './api.ts';
import { useSilenceAction } from '../silences/api.ts';
import { linkWithGlobals, useUrlState } from '../../state/url.ts';
import { formatAgo } from '../../state/timeRange.ts';
import { Panel } from '../../components/Controls.tsx';
import { ShapeTag } from '../../components/ShapeTag.tsx';
import { OnCallActions } from '../../components/OnCallActions.tsx';
import { SilenceConfirmation, SilenceNote } from '../../components/SilenceNote.tsx';

/** What regressed where, its status, and the on-call actions (ack, resolve, silence, reopen). */
export function RegressionHead({ r, where }: { r: Regression; where: string }) {
  const { params } = useUrlState();
  const action = useRegressionAction();
  const silence = useSilenceAction();
  return (
    <>
      <div className="page-head">
        <div>
          <p className="crumbs">
            <Link to={linkWithGlobals('/', params, { from: null, to: null })}>Overview</Link> /
            regression {r.id}
          </p>
          <h1>
            <span className="mono">{r.name}</span> <span className="muted">on</span> {where}
            {r.host ? <span className="muted"> · host {r.host}</span> : null}
          </h1>
          {r.silence ? (
            <p>
              <SilenceNote s={r.silence} />
            </p>
          ) : null}
        </div>
        <div className="row gap wrap">
          <span className={`status-pill status-${r.status}`} data-testid="regression-status">
            {r.status}
          </span>
          <ShapeTag r={r} />
          {r.own ? (
            <span
              className="status-pill shape-transient"
              data-testid="regression-own"
              title="Onset's own noise: never grouped with another incident, never paged"
            >
              {r.own === 'agent-probe' ? "Onset's own: agent probe" : "Onset's own: its database"}
            </span>
          ) : null}
          {r.status === 'resolved' && !r.merged_into ? (
            <button
              type="button"
              className="btn"
              disabled={action.isPending}
              onClick={() => action.mutate({ id: r.id, action: 'reopen' })}
            >
              Reopen
            </button>
          ) : null}
        </div>
      </div>
      {r.merged_into ? (
        <p className="muted small" role="status" data-testid="regression-merged">
          One incident with regression{' '}
          <Link
            to={linkWithGlobals(`/regressions/${r.merged_into}`, params, { from: null, to: null })}
          >
            {r.merged_into}
          </Link>
          : merged into it.
        </p>
      ) : null}
      {r.status !== 'resolved' ? (
        <Panel title="Act on it">
          <OnCallActions
            busy={action.isPending || silence.isPending}
            error={silence.error}
            canAck={r.status === 'open'}
            canResolve
            onAck={(w) => action.mutate({ id: r.id, action: 'ack', ...w })}
            onResolve={(w) => action.mutate({ id: r.id, action: 'resolve', ...w })}
            onSilence={(w) =>
              silence.mutate({
                create: {
                  service: r.service,
                  op: r.op,
                  duration: w.duration,
                  comment: w.comment,
                  ...(w.by ? { created_by: w.by } : {}),
                },
              })
            }
            silenceWhat={`${r.service} ${r.op}`}
          />
          {silence.data && !silence.isPending && !silence.error ? (
            <SilenceConfirmation s={silence.data} what={`${r.service} ${r.op}`} />
          ) : null}
        </Panel>
      ) : null}
      {r.status === 'acknowledged' || r.status === 'resolved' ? (
        <p className="muted small" role="status">
          {r.status === 'acknowledged'
            ? `Acknowledged${r.acknowledged_by ? ` by ${r.acknowledged_by}` : ''}${r.acknowledged_at ? ` ${formatAgo(Date.parse(r.acknowledged_at), Date.now())}` : ''}.`
            : null}
          {r.status === 'resolved'
            ? `Resolved${r.resolved_at ? ` ${formatAgo(Date.parse(r.resolved_at), Date.now())}` : ''}${r.resolution ? `: ${r.resolution}` : ''}.`
            : null}
        </p>
      ) : null}
      {action.error ? (
        <p className="warn" role="alert">
          Could not change the status: {(action.error as Error).message}
        </p>
      ) : null}
    </>
  );
}
