/** TanStack Query hooks, one per endpoint. Keys start with the path so invalidation by prefix works. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router-dom';
import { ApiError, apiFetch, apiPath } from './client.ts';
import type {
  Alert,
  AlertAck,
  AlertList,
  CardinalityStatus,
  AlertListQuery,
  AlertWithEvents,
  Delivery,
  DeliveryList,
  DeployList,
  DeployListQuery,
  Evidence,
  Verdict,
  HeatmapResponse,
  QuantilesColumns,
  Regression,
  RegressionList,
  RegressionTimeline,
  Silence,
  SilenceInput,
  SilenceList,
  RegressionListQuery,
  Series,
  SeriesList,
  SeriesListQuery,
  SeriesSearchResult,
  Arriving,
  SeriesHosts,
  Slo,
  SloCreated,
  SloInput,
  SloList,
  SloSuggestion,
  Webhook,
  WebhookInput,
  WebhookList,
  WebhookUpdate,
} from '@onset/contract';
import { rangeFromParams, refreshInterval, type RangeText } from '../state/timeRange.ts';

/** The auto-refresh interval chosen in the URL (`refresh=30s|1m|off`). */
export function useRefetchInterval(): number | false {
  const [params] = useSearchParams();
  return refreshInterval(params.get('refresh'), rangeFromParams(params));
}

const retry = (n: number, e: unknown) =>
  !(e instanceof ApiError && e.status >= 400 && e.status < 500) && n < 2;

export function useSeriesList(filter: SeriesListQuery = {}) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['series', filter],
    queryFn: () => apiFetch<SeriesList>(apiPath('/api/v1/series', filter)).then((r) => r.series),
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

/** One page of series with the count of every match (`total`): a picker says when it holds fewer. */
export function useSeriesPage(filter: SeriesListQuery = {}) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['series', 'page', filter],
    queryFn: ({ signal }) => apiFetch<SeriesList>(apiPath('/api/v1/series', filter), { signal }),
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

/** One series by id (a series past the first page of the list is still found). */
export function useSeriesOne(id: string | undefined) {
  return useQuery({
    queryKey: ['series', 'one', id],
    queryFn: () => apiFetch<Series>(`/api/v1/series/${encodeURIComponent(id!)}`),
    enabled: !!id,
    retry,
  });
}

/** What is arriving (per service and host) in a range: the newcomer's overview. */
export function useArriving(range: RangeText) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['arriving', range.from, range.to],
    queryFn: () =>
      apiFetch<Arriving>(apiPath('/api/v1/arriving', { from: range.from, to: range.to })),
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

/** One series per host (the Explorer's "group by host" view), slowest first. */
export function useSeriesHosts(id: string, range: RangeText) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['series', 'hosts', id, range.from, range.to],
    queryFn: () =>
      apiFetch<SeriesHosts>(
        apiPath(`/api/v1/series/${encodeURIComponent(id)}/hosts`, {
          from: range.from,
          to: range.to,
        }),
      ),
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

/** The Explorer's search: matching series with current p50/p99, sparkline and badges (server-side). */
export function useSeriesSearch(q: string, range: RangeText, limit = 50) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['series', 'search', q, range.from, range.to, limit],
    queryFn: ({ signal }) =>
      apiFetch<SeriesSearchResult>(
        apiPath('/api/v1/series/search', { q, from: range.from, to: range.to, limit }),
        { signal },
      ),
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

export interface SeriesQuery {
  range: RangeText;
  step?: string;
  host?: string;
  attribute?: string;
  q?: string;
}

export function useQuantiles(id: string | null | undefined, o: SeriesQuery, enabled = true) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: [
      'quantiles',
      id,
      o.range.from,
      o.range.to,
      o.step ?? '',
      o.host ?? '',
      o.attribute ?? '',
      o.q ?? '',
    ],
    queryFn: ({ signal }) =>
      apiFetch<QuantilesColumns>(
        apiPath(`/api/v1/series/${encodeURIComponent(id!)}/quantiles`, {
          from: o.range.from,
          to: o.range.to,
          step: o.step,
          host: o.host,
          attribute: o.attribute,
          q: o.q ?? '0.5,0.99',
          layout: 'columns',
        }),
        { signal },
      ),
    enabled: !!id && enabled,
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
    // Tens of thousands of points: comparing old and new deeply costs more than redrawing.
    structuralSharing: false,
  });
}

export function useHeatmap(id: string | null | undefined, o: SeriesQuery, enabled = true) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['heatmap', id, o.range.from, o.range.to, o.step ?? '', o.host ?? ''],
    queryFn: ({ signal }) =>
      apiFetch<HeatmapResponse>(
        apiPath(`/api/v1/series/${encodeURIComponent(id!)}/heatmap`, {
          from: o.range.from,
          to: o.range.to,
          step: o.step,
          host: o.host,
        }),
        { signal },
      ),
    enabled: !!id && enabled,
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
    structuralSharing: false,
  });
}

export type DeployFilter = DeployListQuery;

export function useDeploys(filter: DeployFilter, enabled = true) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['deploys', filter],
    queryFn: () =>
      apiFetch<DeployList>(apiPath('/api/v1/deploys', { ...filter })).then((r) => r.deploys),
    enabled,
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

/**
 * A deploy's verdict (`GET /api/v1/deploys/:id/verdict`, computed by the server). Asked again
 * every 30 s while it is pending; a decided verdict is final.
 */
export function useVerdict(id: string | null | undefined, enabled = true) {
  return useQuery({
    queryKey: ['deploys', 'verdict', id],
    queryFn: () => apiFetch<Verdict>(`/api/v1/deploys/${encodeURIComponent(id!)}/verdict`),
    enabled: enabled && !!id,
    refetchInterval: (q) => (q.state.data?.verdict === 'pending' ? 30_000 : false),
    staleTime: 60_000,
    retry,
  });
}

export function useRegressions(filter: RegressionListQuery = {}) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['regressions', filter],
    queryFn: () =>
      apiFetch<RegressionList>(apiPath('/api/v1/regressions', filter)).then((r) => r.regressions),
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

export function useRegression(id: string | undefined) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['regressions', 'one', id],
    queryFn: () => apiFetch<Regression>(`/api/v1/regressions/${encodeURIComponent(id!)}`),
    enabled: !!id,
    refetchInterval: interval,
    retry,
  });
}

/** `GET /api/v1/regressions/:id/evidence`: exemplars, attribute lifts, hints (computed by the server). */
export function useRegressionEvidence(id: string | undefined) {
  return useQuery({
    queryKey: ['regressions', 'evidence', id],
    queryFn: () => apiFetch<Evidence>(`/api/v1/regressions/${encodeURIComponent(id!)}/evidence`),
    enabled: !!id,
    retry,
  });
}

/** Ack / resolve / reopen: `POST /api/v1/regressions/:id/{ack|resolve|reopen}` with who and why. */
export function useRegressionAction() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({
      id,
      action,
      by,
      comment,
    }: {
      id: string;
      action: 'ack' | 'resolve' | 'reopen';
      by?: string;
      comment?: string;
    }) =>
      apiFetch<Regression>(`/api/v1/regressions/${encodeURIComponent(id)}/${action}`, {
        method: 'POST',
        json: { ...(by ? { by } : {}), ...(comment ? { comment } : {}) },
      }),
    onSettled: () => {
      void qc.invalidateQueries({ queryKey: ['regressions'] });
      void qc.invalidateQueries({ queryKey: ['alerts'] });
    },
  });
}

/** `GET /api/v1/regressions/:id/timeline`: the lifecycle the server computed, and the regression's alerts. */
export function useRegressionTimeline(id: string | undefined) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['regressions', 'timeline', id],
    queryFn: () =>
      apiFetch<RegressionTimeline>(`/api/v1/regressions/${encodeURIComponent(id!)}/timeline`),
    enabled: !!id,
    refetchInterval: interval,
    retry,
  });
}

/** Acknowledge or resolve an alert: `POST /api/v1/alerts/:id/{ack|resolve}` with who and why. */
export function useAlertAction() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, action, ...body }: { id: string; action: 'ack' | 'resolve' } & AlertAck) =>
      apiFetch<Alert>(`/api/v1/alerts/${encodeURIComponent(id)}/${action}`, {
        method: 'POST',
        json: body,
      }),
    onSettled: () => {
      void qc.invalidateQueries({ queryKey: ['alerts'] });
      void qc.invalidateQueries({ queryKey: ['regressions'] });
      void qc.invalidateQueries({ queryKey: ['slos'] });
    },
  });
}

export function useSilences() {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['silences'],
    queryFn: () => apiFetch<SilenceList>('/api/v1/silences').then((r) => r.silences),
    refetchInterval: interval,
    retry,
  });
}

/** Create a silence (`POST /api/v1/silences`) or end one now (`DELETE /api/v1/silences/:id`). */
export function useSilenceAction() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (
      op: { create: SilenceInput; end?: undefined } | { end: string; create?: undefined },
    ) =>
      op.create
        ? apiFetch<Silence>('/api/v1/silences', { method: 'POST', json: op.create })
        : apiFetch<Silence>(`/api/v1/silences/${encodeURIComponent(op.end!)}`, {
            method: 'DELETE',
          }),
    onSettled: () => {
      void qc.invalidateQueries({ queryKey: ['silences'] });
      void qc.invalidateQueries({ queryKey: ['alerts'] });
      void qc.invalidateQueries({ queryKey: ['slos'] });
      void qc.invalidateQueries({ queryKey: ['regressions'] });
    },
  });
}

export function useSlos() {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['slos'],
    queryFn: () => apiFetch<SloList>('/api/v1/slos').then((r) => r.slos),
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

export function useSlo(id: string | undefined) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['slos', 'one', id],
    queryFn: () => apiFetch<Slo>(`/api/v1/slos/${encodeURIComponent(id!)}`),
    enabled: !!id,
    refetchInterval: interval,
    retry,
  });
}

export function useAlerts(filter: AlertListQuery = {}) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['alerts', filter],
    queryFn: () => apiFetch<AlertList>(apiPath('/api/v1/alerts', filter)).then((r) => r.alerts),
    refetchInterval: interval,
    retry,
  });
}

export function useCreateSlo() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (spec: SloInput) =>
      apiFetch<SloCreated>('/api/v1/slos', { method: 'POST', json: spec }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['slos'] }),
  });
}

export function useWebhooks() {
  return useQuery({
    queryKey: ['webhooks'],
    queryFn: () => apiFetch<WebhookList>('/api/v1/webhooks').then((r) => r.webhooks),
    retry,
  });
}

export function useCreateWebhook() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (spec: WebhookInput) =>
      apiFetch<Webhook>('/api/v1/webhooks', { method: 'POST', json: spec }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['webhooks'] }),
  });
}

/** Change a webhook (`PUT`, any subset of its fields) or remove it (`DELETE`). */
export function useWebhookChange() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, update }: { id: string; update: WebhookUpdate | 'delete' }) =>
      update === 'delete'
        ? apiFetch<Webhook | undefined>(`/api/v1/webhooks/${encodeURIComponent(id)}`, {
            method: 'DELETE',
          })
        : apiFetch<Webhook>(`/api/v1/webhooks/${encodeURIComponent(id)}`, {
            method: 'PUT',
            json: update,
          }),
    onSettled: () => qc.invalidateQueries({ queryKey: ['webhooks'] }),
  });
}

/** Change an SLO (`PUT /api/v1/slos/:id`, the whole spec) or delete it. */
export function useSloChange() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, spec }: { id: string; spec: SloInput | 'delete' }) =>
      spec === 'delete'
        ? apiFetch<Slo | undefined>(`/api/v1/slos/${encodeURIComponent(id)}`, { method: 'DELETE' })
        : apiFetch<Slo>(`/api/v1/slos/${encodeURIComponent(id)}`, { method: 'PUT', json: spec }),
    onSettled: () => {
      void qc.invalidateQueries({ queryKey: ['slos'] });
      void qc.invalidateQueries({ queryKey: ['alerts'] });
    },
  });
}

export function useTestWebhook() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      apiFetch<Delivery>(`/api/v1/webhooks/${encodeURIComponent(id)}/test`, { method: 'POST' }),
    onSettled: () => qc.invalidateQueries({ queryKey: ['deliveries'] }),
  });
}

export function useDeliveries(webhookId: string | undefined) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['deliveries', webhookId],
    queryFn: () =>
      apiFetch<DeliveryList>(
        apiPath(`/api/v1/webhooks/${encodeURIComponent(webhookId!)}/deliveries`, { limit: 50 }),
      ).then((r) => r.deliveries),
    enabled: !!webhookId,
    refetchInterval: interval === false ? false : Math.min(interval, 10_000),
    retry,
  });
}

export function useAlert(id: string | undefined) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['alerts', 'one', id],
    queryFn: () => apiFetch<AlertWithEvents>(`/api/v1/alerts/${encodeURIComponent(id!)}`),
    enabled: !!id,
    // Deliveries change on their own (retries): an alert page stays current.
    refetchInterval: interval === false ? false : Math.min(interval, 10_000),
    retry,
  });
}

export function useSloSuggestion(seriesId: string | undefined, objective: number) {
  return useQuery({
    queryKey: ['slo-suggestion', seriesId, objective],
    queryFn: () =>
      apiFetch<SloSuggestion>(
        apiPath(`/api/v1/series/${encodeURIComponent(seriesId!)}/slo-suggestion`, { objective }),
      ),
    enabled: !!seriesId,
    retry,
  });
}

/** Cardinality limits, usage and drops (GET /api/v1/limits), for the Overview's notice. */
export function useCardinality() {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['limits'],
    queryFn: () => apiFetch<CardinalityStatus>('/api/v1/limits'),
    refetchInterval: interval === false ? 60_000 : interval,
    retry,
  });
}
