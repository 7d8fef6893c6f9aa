/** Loading, empty and error states that say what is happening and what to do. */
import type { ReactNode } from 'react';
import { ApiError } from '../api/client.ts';

export function Loading({ label = 'Loading…', height }: { label?: string; height?: number }) {
  return (
    <div
      className="state state-loading"
      role="status"
      aria-live="polite"
      style={height ? { height } : undefined}
    >
      <span className="spinner" aria-hidden="true" /> {label}
    </div>
  );
}

export function Empty({
  title,
  children,
  height,
}: {
  title: string;
  children?: ReactNode;
  height?: number;
}) {
  return (
    <div className="state state-empty" style={height ? { height } : undefined}>
      <div className="state-title">{title}</div>
      {children ? <div className="state-body">{children}</div> : null}
    </div>
  );
}

/** Explain an API failure: missing endpoint, token, scope, server down, or the server's own message. */
export function ErrorState({
  error,
  what,
  height,
  onRetry,
}: {
  error: unknown;
  what: string;
  height?: number;
  onRetry?: () => void;
}) {
  const e = error instanceof ApiError ? error : null;
  let title = `Could not load ${what}`;
  let hint: ReactNode = e?.message ?? String((error as Error)?.message ?? error);
  if (e?.missingEndpoint) {
    title = `This Onset server does not serve ${what} yet`;
    hint = (
      <>
        <code>{e.path.split('?')[0]}</code> answered 404. Upgrade the server, or check{' '}
        <a href="/docs/json">/docs/json</a> for the routes it has.
      </>
    );
  } else if (e?.status === 401) {
    title = 'A token is needed';
    hint =
      'This server requires a bearer token. Enter one with a "read" scope in the prompt (or under Settings → Token).';
  } else if (e?.status === 403) {
    title = `Your token may not read ${what}`;
    hint = `${e.message}. Ask for a token with the needed scope (Settings → Token shows yours).`;
  } else if (e?.status === 0) {
    title = 'The Onset server is unreachable';
    hint = `${e.message} Data will load again as soon as it answers.`;
  } else if (e && e.status >= 500) {
    title = `The server failed to load ${what}`;
    hint = `${e.message} (HTTP ${e.status}). Retry, or check the server log.`;
  }
  return (
    <div className="state state-error" role="alert" style={height ? { height } : undefined}>
      <div className="state-title">{title}</div>
      <div className="state-body">{hint}</div>
      {onRetry ? (
        <button type="button" className="btn" onClick={onRetry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

/** Render a query's data, or its loading/error state, at a fixed height so the page does not jump. */
export function QueryView<T>({
  query,
  what,
  height,
  empty,
  isEmpty,
  children,
}: {
  query: { data: T | undefined; error: unknown; isPending: boolean; refetch: () => unknown };
  what: string;
  height?: number;
  empty?: ReactNode;
  isEmpty?: (d: T) => boolean;
  children: (data: T) => ReactNode;
}) {
  if (query.data === undefined) {
    if (query.error)
      return (
        <ErrorState
          error={query.error}
          what={what}
          height={height}
          onRetry={() => query.refetch()}
        />
      );
    return <Loading label={`Loading ${what}…`} height={height} />;
  }
  if (isEmpty?.(query.data) && empty) return <>{empty}</>;
  return (
    <>
      {query.error ? (
        <ErrorState
          error={query.error}
          what={`fresh ${what} (showing the last data)`}
          onRetry={() => query.refetch()}
        />
      ) : null}
      {children(query.data)}
    </>
  );
}

/** Room a chart's legend takes under its plot; a loading state of a chart's height plus this does not jump. */
const CHART_LEGEND_HEIGHT = 28;

/**
 * A chart in a panel: the chart once its data is shaped, else the query's error
 * (with Retry) at the chart's height, else a spinner as tall as chart and legend.
 */
export function ChartOrState<T>({
  data,
  query,
  what,
  loadingLabel,
  height,
  children,
}: {
  data: T | null;
  query: { error: unknown; refetch: () => unknown };
  what: string;
  loadingLabel: string;
  height: number;
  children: (data: T) => ReactNode;
}) {
  if (data) return <>{children(data)}</>;
  if (query.error)
    return (
      <ErrorState error={query.error} what={what} height={height} onRetry={() => query.refetch()} />
    );
  return <Loading label={loadingLabel} height={height + CHART_LEGEND_HEIGHT} />;
}
