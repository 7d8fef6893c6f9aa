/** TanStack Query hooks, one per endpoint. Keys start with the path so invalidation by prefix works. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router-dom';
import { ApiError, apiFetch, apiPath } from './client.ts';
import type {
  AlertEvent,
  CohortsResponse,
  Delivery,
  Deploy,
  HeatmapResponse,
  QuantilesResponse,
  Regression,
  Series,
  Slo,
  Webhook,
} from './types.ts';
import { rangeFromParams, refreshInterval, type RangeText } from '../state/timeRange.ts';

/** The auto-refresh interval chosen in the URL (`refresh=30s|1m|off`). */
export function useRefetchInterval(): number | false {
  const [params] = useSearchParams();
  return refreshInterval(params.get('refresh'), rangeFromParams(params));
}

const retry = (n: number, e: unknown) =>
  !(e instanceof ApiError && e.status >= 400 && e.status < 500) && n < 2;

export function useSeriesList(filter: Record<string, string | undefined> = {}) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['series', filter],
    queryFn: () =>
      apiFetch<{ series: Series[] }>(apiPath('/api/v1/series', filter)).then((r) => r.series),
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

export function useSeries(id: string | null | undefined) {
  return useQuery({
    queryKey: ['series', 'one', id],
    queryFn: () => apiFetch<Series>(`/api/v1/series/${encodeURIComponent(id!)}`),
    enabled: !!id,
    retry,
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
      apiFetch<QuantilesResponse>(
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

export function useCohorts(id: string | null | undefined) {
  return useQuery({
    queryKey: ['cohorts', id],
    queryFn: () => apiFetch<CohortsResponse>(`/api/v1/series/${encodeURIComponent(id!)}/cohorts`),
    enabled: !!id,
    retry,
  });
}

export interface DeployFilter {
  /** Only markers that can explain a change in this series (the server's attribution rule). */
  series_id?: string;
  service?: string;
  host?: string;
  kind?: string;
  from?: string;
  to?: string;
}

export function useDeploys(filter: DeployFilter, enabled = true) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['deploys', filter],
    queryFn: () =>
      apiFetch<{ deploys?: Deploy[]; markers?: Deploy[] } | Deploy[]>(
        apiPath('/api/v1/deploys', { ...filter }),
      ).then(listOf<Deploy>('deploys', 'markers')),
    enabled,
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

/** Accept `{deploys: [...]}`, `{markers: [...]}` or a bare array: the list endpoints are young. */
function listOf<T>(...keys: string[]) {
  return (r: unknown): T[] => {
    if (Array.isArray(r)) return r as T[];
    const obj = (r ?? {}) as Record<string, unknown>;
    for (const k of keys) if (Array.isArray(obj[k])) return obj[k] as T[];
    for (const v of Object.values(obj)) if (Array.isArray(v)) return v as T[];
    return [];
  };
}

export function useRegressions(filter: { status?: string; service?: string; since?: string } = {}) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['regressions', filter],
    queryFn: () =>
      apiFetch<unknown>(apiPath('/api/v1/regressions', filter)).then(
        listOf<Regression>('regressions'),
      ),
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

/** One regression: the item endpoint if the server has it, else found in the list. */
export function useRegression(id: string | undefined) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['regressions', 'one', id],
    queryFn: async () => {
      try {
        const r = await apiFetch<Regression | { regression: Regression }>(
          `/api/v1/regressions/${encodeURIComponent(id!)}`,
        );
        return 'regression' in r && r.regression ? r.regression : (r as Regression);
      } catch (e) {
        if (!(e instanceof ApiError && e.missingEndpoint)) throw e;
        const all = await apiFetch<unknown>(apiPath('/api/v1/regressions', { status: 'all' })).then(
          listOf<Regression>('regressions'),
        );
        const found = all.find((r) => String(r.id) === id);
        if (!found)
          throw new ApiError(
            404,
            'not_found',
            `regression ${id} does not exist`,
            `/api/v1/regressions/${id}`,
          );
        return found;
      }
    },
    enabled: !!id,
    refetchInterval: interval,
    retry,
  });
}

/** Ack / resolve: `POST /api/v1/regressions/:id/{ack|resolve}`, falling back to PATCH {status}. */
export function useRegressionAction() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, action }: { id: string; action: 'ack' | 'resolve' | 'reopen' }) => {
      const base = `/api/v1/regressions/${encodeURIComponent(id)}`;
      try {
        return await apiFetch<unknown>(`${base}/${action}`, { method: 'POST', json: {} });
      } catch (e) {
        if (!(e instanceof ApiError && e.missingEndpoint)) throw e;
        const status =
          action === 'ack' ? 'acknowledged' : action === 'resolve' ? 'resolved' : 'open';
        return await apiFetch<unknown>(base, { method: 'PATCH', json: { status } });
      }
    },
    onSettled: () => qc.invalidateQueries({ queryKey: ['regressions'] }),
  });
}

export function useSlos() {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['slos'],
    queryFn: () => apiFetch<unknown>('/api/v1/slos').then(listOf<Slo>('slos')),
    refetchInterval: interval,
    retry,
    placeholderData: keepPreviousData,
  });
}

export function useSlo(id: string | undefined) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['slos', 'one', id],
    queryFn: () =>
      apiFetch<Slo | { slo: Slo }>(`/api/v1/slos/${encodeURIComponent(id!)}`).then((r) =>
        'slo' in r && r.slo ? r.slo : (r as Slo),
      ),
    enabled: !!id,
    refetchInterval: interval,
    retry,
  });
}

export function useAlerts(
  filter: {
    slo_id?: string;
    regression_id?: string;
    status?: string;
    type?: string;
    since?: string;
    limit?: number;
  } = {},
) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['alerts', filter],
    queryFn: () =>
      apiFetch<unknown>(apiPath('/api/v1/alerts', filter)).then(
        listOf<AlertEvent>('alerts', 'history'),
      ),
    refetchInterval: interval,
    retry,
  });
}

export function useCreateSlo() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (spec: Partial<Omit<Slo, 'id' | 'status'>>) =>
      apiFetch<Slo>('/api/v1/slos', { method: 'POST', json: spec }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['slos'] }),
  });
}

export function useWebhooks() {
  return useQuery({
    queryKey: ['webhooks'],
    queryFn: () => apiFetch<unknown>('/api/v1/webhooks').then(listOf<Webhook>('webhooks')),
    retry,
  });
}

export function useCreateWebhook() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (spec: {
      url: string;
      format: string;
      name?: string;
      secret?: string;
      routing_key?: string;
      min_severity?: string;
    }) => apiFetch<Webhook>('/api/v1/webhooks', { method: 'POST', json: spec }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['webhooks'] }),
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
      apiFetch<unknown>(
        apiPath(`/api/v1/webhooks/${encodeURIComponent(webhookId!)}/deliveries`, { limit: 50 }),
      ).then(listOf<Delivery>('deliveries')),
    enabled: !!webhookId,
    refetchInterval: interval === false ? false : Math.min(interval, 10_000),
    retry,
  });
}

export function useAlert(id: string | undefined) {
  return useQuery({
    queryKey: ['alerts', 'one', id],
    queryFn: () => apiFetch<AlertEvent>(`/api/v1/alerts/${encodeURIComponent(id!)}`),
    enabled: !!id,
    retry,
  });
}

export interface SloSuggestion {
  slo: {
    name: string;
    series_id: string;
    service: string;
    threshold_ms: number;
    objective: number;
    window: string;
  };
  basis: { from: string; to: string; events: number; quantile_ms: number; expected_sli: number };
  watched_by: Array<{ id: string; name: string }>;
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
