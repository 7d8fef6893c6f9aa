/** The trace view's read: `GET /api/v1/traces/:trace_id` (the trace's stored spans). */
import { useOp } from '../../api/useOp.ts';

export function useTrace(traceId: string | undefined) {
  return useOp(
    'GET /api/v1/traces/:trace_id',
    { params: { trace_id: traceId ?? '' } },
    { enabled: !!traceId, refresh: 'never', keepPrevious: false },
  );
}
