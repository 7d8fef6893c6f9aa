/**
 * The Explorer's search box and list: every word typed narrows the series by
 * service, op, name, peer or host (the server searches, so it stays fast with
 * thousands of series); each row shows the current p50/p99, a p99 sparkline
 * and badges for an open regression and the SLOs watching.
 */
import { useDeferredValue, useEffect, useState } from 'react';
import { Link } from 'react-router-dom';
import type { SeriesSummary } from '@onset/contract';
import { useSeriesSearch } from './api.ts';
import { edgeLabel, formatLatencyMs, formatRatio } from '../../lib/format.ts';
import { formatInstant } from '../../lib/time.ts';
import { linkWithGlobals, useUrlState } from '../../state/url.ts';
import type { RangeText } from '../../state/timeRange.ts';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { Sparkline } from '../../components/Sparkline.tsx';

export function SeriesSearchBox({
  value,
  onChange,
}: {
  value: string;
  onChange: (text: string) => void;
}) {
  return (
    <div className="series-search" role="search">
      <label htmlFor="series-search-input" className="field-label">
        Find a series
      </label>
      <input
        id="series-search-input"
        type="search"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        placeholder="service, op, name, host or peer: e.g. checkout lookup"
        autoComplete="off"
        spellCheck={false}
        aria-describedby="series-search-help"
      />
      <span id="series-search-help" className="sr-only">
        Every word must appear in the service, operation, name, peer or a host of the series.
        Results update as you type.
      </span>
    </div>
  );
}

/** Search text kept in the URL (`find`), typed into local state so no keystroke waits for the router. */
export function useFindText(): [string, (t: string) => void] {
  const { get, set } = useUrlState();
  const [text, setText] = useState(get('find'));
  const urlText = get('find');
  useEffect(() => setText(urlText), [urlText]);
  return [
    text,
    (t: string) => {
      setText(t);
      set({ find: t || null });
    },
  ];
}

export function SeriesResults({
  find,
  range,
  selectedId,
}: {
  find: string;
  range: RangeText;
  selectedId?: string;
}) {
  const { params } = useUrlState();
  const q = useDeferredValue(find.trim());
  const search = useSeriesSearch(q, range);
  const data = search.data;
  if (!data)
    return search.error ? (
      <ErrorState error={search.error} what="the series search" onRetry={() => search.refetch()} />
    ) : (
      <Loading label="Searching series…" height={160} />
    );
  if (!data.series.length)
    return q ? (
      <Empty title={`No series matches “${q}”`}>
        Words are matched in the service, op, name, peer and host names. Try fewer letters.
      </Empty>
    ) : (
      <Empty title="No latency series yet">
        Send OpenTelemetry traces to <code>POST /v1/traces</code> (port 4318 or this port), or start
        the local agent (<code>npm start</code>). Series appear here within seconds.
      </Empty>
    );
  return (
    <div
      className="table-scroll"
      id="series-results"
      aria-live="polite"
      aria-busy={search.isFetching}
    >
      <p className="muted small" data-testid="series-results-count">
        {data.total > data.series.length
          ? `${data.series.length} of ${data.total} series`
          : `${data.total} series`}
        {search.isPlaceholderData ? ` (searching “${q}”…)` : q ? ` matching “${q}”` : ''}. “Now” is
        the latest step of the range with calls.
      </p>
      <table className="table series-table">
        <thead>
          <tr>
            <th scope="col">Series</th>
            <th scope="col" className="num">
              p50 now
            </th>
            <th scope="col" className="num">
              p99 now
            </th>
            <th scope="col">p99 over the range</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {data.series.map((s) => (
            <SeriesRow key={s.id} s={s} params={params} selected={s.id === selectedId} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SeriesRow({
  s,
  params,
  selected,
}: {
  s: SeriesSummary;
  params: URLSearchParams;
  selected: boolean;
}) {
  return (
    <tr data-series-id={s.id} className={selected ? 'selected' : undefined}>
      <td>
        <Link
          to={linkWithGlobals('/explorer', params, { series: s.id, find: params.get('find') })}
          aria-current={selected ? 'true' : undefined}
        >
          <span className="mono">{s.name}</span>
        </Link>
        <div className="muted small">
          {edgeLabel(s)} · {s.op} · {s.view}
          {s.hosts.length
            ? ` · ${s.hosts.length === 1 ? s.hosts[0] : `${s.hosts.length} hosts`}`
            : ''}
        </div>
      </td>
      <td className="num">{s.current.p50_ms === null ? '–' : formatLatencyMs(s.current.p50_ms)}</td>
      <td className="num">{s.current.p99_ms === null ? '–' : formatLatencyMs(s.current.p99_ms)}</td>
      <td>
        <Sparkline values={s.spark.p99_ms} label={`p99 of ${s.name} over the range`} />
      </td>
      <td className="badges">
        {s.regression ? (
          <Link
            className="badge badge-regressed"
            to={linkWithGlobals(`/regressions/${s.regression.id}`, params, {
              from: null,
              to: null,
            })}
            title={`${s.regression.status} regression of ${s.regression.metric} since ${formatInstant(Date.parse(s.regression.onset))}`}
          >
            regressed {formatRatio(s.regression.ratio)}
          </Link>
        ) : null}
        {s.slo_ids.length ? (
          <Link
            className="badge badge-slo"
            to={linkWithGlobals(s.slo_ids.length === 1 ? `/slos/${s.slo_ids[0]}` : '/slos', params)}
          >
            {s.slo_ids.length === 1 ? 'has SLO' : `${s.slo_ids.length} SLOs`}
          </Link>
        ) : null}
        {!s.regression && !s.slo_ids.length ? <span className="muted small">–</span> : null}
      </td>
    </tr>
  );
}
