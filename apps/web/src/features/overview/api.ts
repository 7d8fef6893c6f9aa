/** The Overview's own reads: what is arriving, and the cardinality limits. */
import { useOp } from '../../api/useOp.ts';
import type { RangeText } from '../../state/timeRange.ts';

/** What is arriving (per service and host) in a range: the newcomer's overview. */
export function useArriving(range: RangeText) {
  return useOp('GET /api/v1/arriving', { query: { from: range.from, to: range.to } });
}

/** Cardinality limits, usage and drops (GET /api/v1/limits), for the Overview's notice. */
export function useCardinality() {
  return useOp(
    'GET /api/v1/limits',
    {},
    { refresh: (page) => (page === false ? 60_000 : page), keepPrevious: false },
  );
}
