/** The SLO history the server computes (GET /api/v1/slos/{id}/history); the page only draws it. */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { apiFetch, apiPath } from '../../api/client.ts';
import { useRefetchInterval } from '../../api/queries.ts';
import type { SloHistory } from '@onset/contract';

export type { SloHistory };

export function useSloHistory(id: string, range: { from: string; to: string }) {
  const interval = useRefetchInterval();
  return useQuery({
    queryKey: ['slo-history', id, range.from, range.to],
    queryFn: ({ signal }) =>
      apiFetch<SloHistory>(
        apiPath(`/api/v1/slos/${encodeURIComponent(id)}/history`, {
          from: range.from,
          to: range.to,
        }),
        { signal },
      ),
    refetchInterval: interval,
    placeholderData: keepPreviousData,
  });
}
