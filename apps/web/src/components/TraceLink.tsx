/**
 * An exemplar's trace id as links: the in-app trace view (its stored spans) and, when
 * ONSET_TRACE_URL_TEMPLATE is set, the configured trace viewer.
 */
import { Link } from 'react-router-dom';
import { safeHttpUrl } from '../lib/format.ts';
import { linkWithGlobals, useUrlState } from '../state/url.ts';

export function TraceLink({ traceId, traceUrl }: { traceId: string; traceUrl?: string }) {
  const { params } = useUrlState();
  const external = safeHttpUrl(traceUrl);
  return (
    <span className="trace-link">
      <Link
        to={linkWithGlobals(`/traces/${traceId}`, params)}
        data-testid="trace-link"
        title="Open this trace's stored spans"
      >
        {traceId.slice(0, 16)}…
      </Link>
      {external ? (
        <>
          {' '}
          <a
            href={external}
            target="_blank"
            rel="noreferrer"
            className="small"
            data-testid="trace-viewer-link"
          >
            viewer ↗
          </a>
        </>
      ) : null}
    </span>
  );
}
