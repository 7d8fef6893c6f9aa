/** Deploy markers and their verdicts. */
import type { DeployListQuery } from '@onset/contract';
import { useOp } from '../../api/useOp.ts';

export type DeployFilter = DeployListQuery;

export function useDeploys(filter: DeployFilter, enabled = true) {
  return useOp('GET /api/v1/deploys', { query: filter }, { enabled, select: (r) => r.deploys });
}

/**
 * A deploy's verdict (`GET /api/v1/deploys/:id/verdict`, computed by the server). Asked again
 * every 30 s while it is pending; a decided verdict is final.
 */
export function useVerdict(id: string | null | undefined, enabled = true) {
  return useOp(
    'GET /api/v1/deploys/:id/verdict',
    { params: { id: id ?? '' } },
    {
      enabled: enabled && !!id,
      refetchInterval: (v) => (v?.verdict === 'pending' ? 30_000 : false),
      staleTime: 60_000,
      keepPrevious: false,
    },
  );
}
