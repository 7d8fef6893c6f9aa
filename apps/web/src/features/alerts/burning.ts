/**
 * The regression that burns an SLO: for each SLO alert's SLO, the open regressions on series
 * it watches (the server's membership, GET /api/v1/slos/watching), as the SLO page lists them.
 */
import type { Alert, Regression } from '@onset/contract';
import { useRegressions } from '../regressions/api.ts';
import { useSloWatching } from '../slos/api.ts';

export function useBurningRegressions(
  alerts: ReadonlyArray<Pick<Alert, 'slo_id'>>,
): Map<string, Regression[]> {
  const sloIds = new Set(alerts.flatMap((a) => (a.slo_id ? [a.slo_id] : [])));
  const regressions = useRegressions({ status: 'active' });
  const candidates = sloIds.size ? (regressions.data ?? []) : [];
  const { watching } = useSloWatching(candidates.map((r) => r.series_id));
  const out = new Map<string, Regression[]>();
  for (const r of candidates)
    for (const slo of watching.get(r.series_id) ?? [])
      if (sloIds.has(slo)) out.set(slo, [...(out.get(slo) ?? []), r]);
  return out;
}
