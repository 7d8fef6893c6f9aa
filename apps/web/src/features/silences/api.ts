/** Silences: the list, creating one, ending one now. */
import type { SilenceInput } from '@onset/contract';
import { request } from '../../api/client.ts';
import { useOp, useOpMutation } from '../../api/useOp.ts';

export function useSilences() {
  return useOp('GET /api/v1/silences', {}, { select: (r) => r.silences, keepPrevious: false });
}

/** Create a silence (`POST /api/v1/silences`) or end one now (`DELETE /api/v1/silences/:id`). */
export function useSilenceAction() {
  return useOpMutation(
    (op: { create: SilenceInput; end?: undefined } | { end: string; create?: undefined }) =>
      op.create
        ? request('POST /api/v1/silences', { body: op.create })
        : request('DELETE /api/v1/silences/:id', { params: { id: op.end! } }),
    { stale: ['silences', 'alerts', 'slos', 'regressions'] },
  );
}
