/** The Explorer's reads: series (list, page, one), per-host series, search, quantiles, heatmap, edge views, cohorts. */
import { useQueries } from '@tanstack/react-query';
import type { OpResponse, QuantilesColumns, SeriesListQuery } from '@onset/contract';
import { opQuery, useOp, useRefetchInterval } from '../../api/useOp.ts';
import type { RangeText } from '../../state/timeRange.ts';

export function useSeriesList(filter: SeriesListQuery = {}) {
  return useOp('GET /api/v1/series', { query: filter }, { select: (r) => r.series });
}

/** One page of series with the count of every match (`total`): a picker says when it holds fewer. */
export function useSeriesPage(filter: SeriesListQuery = {}) {
  return useOp('GET /api/v1/series', { query: filter });
}

/** One series by id (a series past the first page of the list is still found). */
export function useSeriesOne(id: string | undefined) {
  return useOp(
    'GET /api/v1/series/:id',
    { params: { id: id ?? '' } },
    { enabled: !!id, refresh: 'never', keepPrevious: false },
  );
}

/** One series per host (the Explorer's "group by host" view), slowest first. */
export function useSeriesHosts(id: string, range: RangeText) {
  return useOp('GET /api/v1/series/:id/hosts', {
    params: { id },
    query: { from: range.from, to: range.to },
  });
}

/** The Explorer's search: matching series with current p50/p99, sparkline and badges (server-side). */
export function useSeriesSearch(q: string, range: RangeText, limit = 50) {
  return useOp('GET /api/v1/series/search', {
    query: { q, from: range.from, to: range.to, limit },
  });
}

export interface SeriesQuery {
  range: RangeText;
  step?: string;
  host?: string;
  attribute?: string;
  q?: string;
}

/** Asked with `layout=columns`: the server answers columns (the points layout is its default). */
function columns(r: OpResponse<'GET /api/v1/series/:id/quantiles'>): QuantilesColumns {
  if (!('columns' in r)) throw new Error('the server answered points, not the columns asked for');
  return r;
}

const quantilesArgs = (id: string, o: SeriesQuery) =>
  ({
    params: { id },
    query: {
      from: o.range.from,
      to: o.range.to,
      step: o.step,
      host: o.host,
      attribute: o.attribute,
      q: o.q ?? '0.5,0.99',
      layout: 'columns',
    },
  }) as const;

export function useQuantiles(id: string | null | undefined, o: SeriesQuery, enabled = true) {
  return useOp('GET /api/v1/series/:id/quantiles', quantilesArgs(id ?? '', o), {
    enabled: !!id && enabled,
    select: columns,
    structuralSharing: false,
  });
}

/** The quantiles of several cuts of one series (the cohort split: one attribute value each). */
export function useQuantilesOf(id: string, cuts: readonly SeriesQuery[]) {
  const interval = useRefetchInterval();
  return useQueries({
    queries: cuts.map((o) =>
      opQuery(
        'GET /api/v1/series/:id/quantiles',
        quantilesArgs(id, o),
        { select: columns, keepPrevious: false },
        interval,
      ),
    ),
  });
}

export function useHeatmap(id: string | null | undefined, o: SeriesQuery, enabled = true) {
  return useOp(
    'GET /api/v1/series/:id/heatmap',
    {
      params: { id: id ?? '' },
      query: { from: o.range.from, to: o.range.to, step: o.step, host: o.host },
    },
    { enabled: !!id && enabled, structuralSharing: false },
  );
}

/** The edge a series belongs to, as the server finds and summarises it (around `onsetMs` when given). */
export function useEdge(
  seriesId: string | undefined,
  o: { range: { from: string; to: string }; onsetMs?: number },
  enabled = true,
) {
  const onset = o.onsetMs === undefined ? undefined : new Date(o.onsetMs).toISOString();
  return useOp(
    'GET /api/v1/series/:id/edge',
    {
      params: { id: seriesId ?? '' },
      query: { from: o.range.from, to: o.range.to, q: '0.5,0.99', onset },
    },
    { enabled: enabled && seriesId !== undefined },
  );
}

/** The cohort attribute values of the hosts feeding each series. */
export function useCohorts(seriesIds: readonly string[]) {
  return useQueries({
    queries: seriesIds.map((id) =>
      opQuery(
        'GET /api/v1/series/:id/cohorts',
        { params: { id } },
        { refresh: 'never', keepPrevious: false },
        false,
      ),
    ),
  });
}
