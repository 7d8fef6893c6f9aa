/** The SLO history the server computes (GET /api/v1/slos/{id}/history); the page only draws it. */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { apiFetch, apiPath } from '../../api/client.ts';
import { useRefetchInterval } from '../../api/queries.ts';
import type { SloTier } from '../../api/types.ts';

export interface SloHistory {
  slo_id: string;
  from: string;
  to: string;
  objective: number;
  threshold_ms: number;
  window: string;
  window_ms: number;
  series_ids: string[];
  tiers: SloTier[];
  budget_remaining: number;
  exhaustion_ms: number | null;
  burn: {
    step_ms: number;
    t: number[];
    lines: Array<{
      tier: string;
      window: string;
      factor: number;
      severity: string;
      enabled: boolean;
      values: Array<number | null>;
    }>;
  };
  budget: { step_ms: number; t: number[]; values: Array<number | null> };
}

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
