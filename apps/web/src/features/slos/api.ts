/** SLOs: the list, one, creating and changing one, a threshold suggestion, its history, and which SLOs watch which series. */
import type { SloInput } from '@onset/contract';
import { request } from '../../api/client.ts';
import { useOp, useOpMutation } from '../../api/useOp.ts';
import type { Watching } from '../../lib/severity.ts';

export function useSlos() {
  return useOp('GET /api/v1/slos', {}, { select: (r) => r.slos });
}

export function useSlo(id: string | undefined) {
  return useOp(
    'GET /api/v1/slos/:id',
    { params: { id: id ?? '' } },
    { enabled: !!id, keepPrevious: false },
  );
}

export function useCreateSlo() {
  return useOpMutation((spec: SloInput) => request('POST /api/v1/slos', { body: spec }), {
    stale: ['slos'],
    onSuccessOnly: true,
    awaitStale: true,
  });
}

/** Change an SLO (`PUT /api/v1/slos/:id`, the whole spec) or delete it. */
export function useSloChange() {
  return useOpMutation(
    ({ id, spec }: { id: string; spec: SloInput | 'delete' }) =>
      spec === 'delete'
        ? request('DELETE /api/v1/slos/:id', { params: { id } })
        : request('PUT /api/v1/slos/:id', { params: { id }, body: spec }),
    { stale: ['slos', 'alerts'] },
  );
}

export function useSloSuggestion(seriesId: string | undefined, objective: number) {
  return useOp(
    'GET /api/v1/series/:id/slo-suggestion',
    { params: { id: seriesId ?? '' }, query: { objective } },
    { enabled: !!seriesId, refresh: 'never', keepPrevious: false },
  );
}

/** The SLO history the server computes (GET /api/v1/slos/{id}/history); the page only draws it. */
export function useSloHistory(id: string, range: { from: string; to: string }) {
  return useOp('GET /api/v1/slos/:id/history', {
    params: { id },
    query: { from: range.from, to: range.to },
  });
}

/**
 * Series id → ids of the SLOs whose selector matches it (empty until the answer is in), and
 * whether the answer is in (or failed): pages that rank or size by it wait for `settled`.
 */
export function useSloWatching(seriesIds: readonly string[]): {
  watching: Watching;
  settled: boolean;
} {
  const ids = [...new Set(seriesIds)].sort().slice(0, 1000);
  const q = useOp(
    'GET /api/v1/slos/watching',
    { query: { series_id: ids.join(',') } },
    { enabled: ids.length > 0 },
  );
  return {
    watching: new Map((q.data?.series ?? []).map((s) => [s.series_id, s.slo_ids])),
    settled: ids.length === 0 || q.data !== undefined || q.isError,
  };
}
