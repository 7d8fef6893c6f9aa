/** The Explorer's reads: series (page, by labels, one), picker options, per-host series, search, quantiles, heatmap, edge views, cohorts. */
import { useQueries, type QueryClient } from '@tanstack/react-query';
import {
  OPS,
  VIEWS,
  type Op,
  type OpArgs,
  type OpResponse,
  type QuantilesColumns,
  type SeriesListQuery,
  type SeriesOptions,
  type View,
} from '@onset/contract';
import { request } from '../../api/client.ts';
import { opKey, opQuery, useOp, useRefetchInterval } from '../../api/useOp.ts';
import type { RangeText } from '../../state/timeRange.ts';
import type { Selection } from './selection.ts';

/** One page of series with the count of every match (`total`): a picker says when it holds fewer. */
export function useSeriesPage(filter: SeriesListQuery = {}, enabled = true) {
  return useOp('GET /api/v1/series', { query: filter }, { enabled });
}

const asOp = (x: string | null | undefined) => (OPS.includes(x as Op) ? (x as Op) : undefined);
const asView = (x: string | null | undefined) =>
  VIEWS.includes(x as View) ? (x as View) : undefined;

/**
 * The series with these labels (a regression's or an alert's), looked up on the server by
 * exact labels rather than in a page of the list; a label not given is not filtered on.
 */
export function useSeriesByLabels(l: {
  service?: string | null;
  op?: string | null;
  view?: string | null;
  name?: string | null;
  peer?: string | null;
}) {
  const query: SeriesListQuery = {
    service: l.service ?? undefined,
    op: asOp(l.op),
    view: asView(l.view),
    name: l.name ?? undefined,
    peer: l.peer === undefined ? undefined : (l.peer ?? ''),
    limit: 50,
  };
  return useOp('GET /api/v1/series', { query }, { select: (r) => r.series });
}

const optionsArgs = (sel: Selection): OpArgs<'GET /api/v1/series/options'> => ({
  query: {
    service: sel.service || undefined,
    op: sel.op || undefined,
    view: sel.view || undefined,
    name: sel.name || undefined,
    peer: sel.peer || undefined,
  },
});

/** What the Explorer's pickers offer for a choice, over every series (the server's facets). */
export function useSeriesOptions(sel: Selection) {
  return useOp('GET /api/v1/series/options', optionsArgs(sel));
}

/** The same answer, fetched (or taken from the cache) when a picker changes. */
export function fetchSeriesOptions(qc: QueryClient, sel: Selection): Promise<SeriesOptions> {
  const args = optionsArgs(sel);
  return qc.fetchQuery({
    queryKey: opKey('GET /api/v1/series/options', args),
    queryFn: () => request('GET /api/v1/series/options', args),
  });
}

/** The series a (server-checked) choice designates: the first 200 and how many. */
export function useSeriesCandidates(selection: SeriesOptions['selection'] | undefined) {
  return useSeriesPage(
    {
      service: selection?.service,
      op: asOp(selection?.op),
      view: asView(selection?.view),
      name: selection?.name,
      peer: selection?.peer,
      limit: 200,
    },
    !!selection,
  );
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

/** `GET /api/v1/series/:id/groups`: the series as one line per host or attribute value. */
export function useSeriesGroups(
  id: string,
  by: string,
  range: RangeText,
  step?: string,
  limit = 8,
  host?: string,
) {
  return useOp(
    'GET /api/v1/series/:id/groups',
    {
      params: { id },
      query: { by, from: range.from, to: range.to, step, q: '0.5,0.99', limit, host },
    },
    { enabled: !!by, structuralSharing: false },
  );
}

/** Known mechanisms a series' calls show in the window, change or not (the server's read). */
export function useSignatures(seriesId: string | undefined, range: RangeText, enabled = true) {
  return useOp(
    'GET /api/v1/series/:id/signatures',
    { params: { id: seriesId ?? '' }, query: { from: range.from, to: range.to } },
    { enabled: enabled && seriesId !== undefined },
  );
}

/** The window's retrospective segmentation and the changes between its segments (never paging). */
export function useSegments(seriesId: string, range: RangeText, enabled = true) {
  return useOp(
    'GET /api/v1/series/:id/segments',
    { params: { id: seriesId }, query: { from: range.from, to: range.to } },
    { enabled },
  );
}

/** A chart selection's calls against the rest of the window, by attribute (the server's comparison). */
export function useCompare(
  id: string,
  q: {
    fromMs: number;
    toMs: number;
    selFromMs?: number;
    selToMs?: number;
    minMs?: number;
    maxMs?: number;
  },
  enabled = true,
) {
  const t = (ms: number | undefined) => (ms === undefined ? undefined : String(Math.round(ms)));
  return useOp(
    'GET /api/v1/series/:id/compare',
    {
      params: { id },
      query: {
        from: t(q.fromMs),
        to: t(q.toMs),
        sel_from: t(q.selFromMs),
        sel_to: t(q.selToMs),
        min_ms: q.minMs,
        max_ms: q.maxMs,
      },
    },
    { enabled, refresh: 'never' },
  );
}
