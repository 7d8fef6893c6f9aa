/** Which SLOs watch which series, as the server decides it (GET /api/v1/slos/watching). */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { SloWatching } from '@onset/contract';
import { apiFetch, apiPath } from '../../api/client.ts';
import { useRefetchInterval } from '../../api/queries.ts';

import type { Watching } from '../../lib/severity.ts';

/**
 * Series id → ids of the SLOs whose selector matches it (empty until the answer is in), and
 * whether the answer is in (or failed): pages that rank or size by it wait for `settled`.
 */
export function useSloWatching(seriesIds: readonly string[]): {
  watching: Watching;
  settled: boolean;
} {
  const interval = useRefetchInterval();
  const ids = [...new Set(seriesIds)].sort().slice(0, 1000);
  const q = useQuery({
    queryKey: ['slo-watching', ids.join(',')],
    queryFn: ({ signal }) =>
      apiFetch<SloWatching>(apiPath('/api/v1/slos/watching', { series_id: ids.join(',') }), {
        signal,
      }),
    enabled: ids.length > 0,
    refetchInterval: interval,
    placeholderData: keepPreviousData,
  });
  return {
    watching: new Map((q.data?.series ?? []).map((s) => [s.series_id, s.slo_ids])),
    settled: ids.length === 0 || q.data !== undefined || q.isError,
  };
}
