/**
 * One trace's stored spans (GET /api/v1/traces/:trace_id) as a waterfall: a row per span,
 * parents before children and indented under them, a bar from its start to its end on the
 * trace's time axis, and its service, host, name, kind, duration and attributes. A link to the
 * configured trace viewer when the server has one. Nothing here is computed beyond layout.
 */
import { Fragment, useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import type { TraceSpan } from '@onset/contract';
import { useTrace } from './api.ts';
import { ApiError } from '../../api/client.ts';
import { Panel } from '../../components/Controls.tsx';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { formatLatencyMs, safeHttpUrl } from '../../lib/format.ts';
import { formatInstant } from '../../lib/time.ts';
import { linkWithGlobals, useUrlState } from '../../state/url.ts';

export default function TracePage() {
  const { traceId } = useParams();
  const trace = useTrace(traceId);
  const { params } = useUrlState();
  const [open, setOpen] = useState<string | null>(null);
  const head = (
    <div className="page-head">
      <h1>
        Trace <span className="mono small">{traceId}</span>
      </h1>
    </div>
  );
  if (trace.isPending && !trace.error)
    return (
      <div className="page">
        {head}
        <Loading label="Loading the trace's spans…" />
      </div>
    );
  if (!trace.data) {
    const missing = trace.error instanceof ApiError && trace.error.status === 404;
    return (
      <div className="page">
        {head}
        {missing ? (
          <Empty title="No span of this trace is stored">
            {(trace.error as ApiError).message}. Raw spans are kept for ONSET_RAW_RETENTION (48 h by
            default).
          </Empty>
        ) : (
          <ErrorState error={trace.error} what="the trace" onRetry={() => trace.refetch()} />
        )}
      </div>
    );
  }
  const t = trace.data;
  const viewer = safeHttpUrl(t.trace_url);
  const total = Math.max(t.duration_ms, 0.001);
  return (
    <div className="page">
      {head}
      <p className="muted" data-testid="trace-facts">
        {t.spans.length} span{t.spans.length === 1 ? '' : 's'} · {t.services.join(', ')} · started{' '}
        {formatInstant(Date.parse(t.start), true)} · {formatLatencyMs(t.duration_ms)}
        {t.truncated ? ' · more spans are stored than shown' : ''}
        {viewer ? (
          <>
            {' · '}
            <a href={viewer} target="_blank" rel="noreferrer" data-testid="trace-viewer-link">
              Open in the trace viewer ↗
            </a>
          </>
        ) : null}
      </p>
      <Panel title="Spans">
        <table className="table trace-waterfall" data-testid="trace-spans">
          <thead>
            <tr>
              <th>service · name</th>
              <th>kind</th>
              <th>host</th>
              <th className="num">duration</th>
              <th className="waterfall-col">timeline (0 – {formatLatencyMs(total)})</th>
            </tr>
          </thead>
          <tbody>
            {t.spans.map((s) => (
              <Fragment key={s.span_id}>
                <SpanRow
                  s={s}
                  total={total}
                  expanded={open === s.span_id}
                  onToggle={() => setOpen(open === s.span_id ? null : s.span_id)}
                  seriesLink={linkWithGlobals('/explorer', params, { series: s.series_id })}
                />
                {open === s.span_id ? (
                  <tr className="span-attributes" data-testid="span-attributes">
                    <td colSpan={5}>
                      <Attributes title="span attributes" attrs={s.attributes} />
                      <Attributes title="resource attributes" attrs={s.resource_attributes} />
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </table>
      </Panel>
    </div>
  );
}

function SpanRow({
  s,
  total,
  expanded,
  onToggle,
  seriesLink,
}: {
  s: TraceSpan;
  total: number;
  expanded: boolean;
  onToggle: () => void;
  seriesLink: string;
}) {
  const left = (s.offset_ms / total) * 100;
  const width = Math.max(0.5, (s.duration_ms / total) * 100);
  return (
    <tr data-testid="trace-span" data-span-id={s.span_id}>
      <td style={{ paddingLeft: `${0.5 + s.depth * 1.25}rem` }}>
        <button
          type="button"
          className="link-button"
          aria-expanded={expanded}
          onClick={onToggle}
          title="Show this span's attributes"
        >
          {expanded ? '▾' : '▸'}
        </button>{' '}
        <b data-testid="span-service">{s.service}</b> ·{' '}
        <Link to={seriesLink} className="mono" data-testid="span-name">
          {s.name}
        </Link>
      </td>
      <td data-testid="span-kind">{s.kind}</td>
      <td>{s.host}</td>
      <td className="num" data-testid="span-duration">
        {formatLatencyMs(s.duration_ms)}
      </td>
      <td className="waterfall-col">
        <div className="waterfall-track" aria-hidden="true">
          <div
            className={`waterfall-bar kind-${s.kind}`}
            style={{ left: `${Math.min(left, 99.5)}%`, width: `${Math.min(width, 100 - left)}%` }}
          />
        </div>
        <span className="sr-only">
          starts at +{formatLatencyMs(s.offset_ms)}, lasts {formatLatencyMs(s.duration_ms)}
        </span>
      </td>
    </tr>
  );
}

function Attributes({
  title,
  attrs,
}: {
  title: string;
  attrs: Record<string, string | number | boolean> | null;
}) {
  if (attrs === null)
    return (
      <p className="muted small">
        No {title}: this span is not an exemplar (a busy series keeps the attributes of a sample of
        its spans).
      </p>
    );
  const entries = Object.entries(attrs).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div>
      <div className="small muted">{title}</div>
      {entries.length ? (
        <dl className="attr-list">
          {entries.map(([k, v]) => (
            <Fragment key={k}>
              <dt className="mono">{k}</dt>
              <dd className="mono">{String(v)}</dd>
            </Fragment>
          ))}
        </dl>
      ) : (
        <p className="muted small">none</p>
      )}
    </div>
  );
}
