/** Regressions: the list, one, its evidence and lifecycle, and the on-call actions on it. */
import type { RegressionListQuery } from '@onset/contract';
import { request } from '../../api/client.ts';
import { useOp, useOpMutation } from '../../api/useOp.ts';

export function useRegressions(filter: RegressionListQuery = {}) {
  return useOp('GET /api/v1/regressions', { query: filter }, { select: (r) => r.regressions });
}

export function useRegression(id: string | undefined) {
  return useOp(
    'GET /api/v1/regressions/:id',
    { params: { id: id ?? '' } },
    { enabled: !!id, keepPrevious: false },
  );
}

/** `GET /api/v1/regressions/:id/evidence`: exemplars, attribute lifts, hints (computed by the server). */
export function useRegressionEvidence(id: string | undefined) {
  return useOp(
    'GET /api/v1/regressions/:id/evidence',
    { params: { id: id ?? '' } },
    { enabled: !!id, refresh: 'never', keepPrevious: false },
  );
}

/** `GET /api/v1/regressions/:id/timeline`: the lifecycle the server computed, and the regression's alerts. */
export function useRegressionTimeline(id: string | undefined) {
  return useOp(
    'GET /api/v1/regressions/:id/timeline',
    { params: { id: id ?? '' } },
    { enabled: !!id, keepPrevious: false },
  );
}

/** Ack / resolve / reopen: `POST /api/v1/regressions/:id/{ack|resolve|reopen}` with who and why. */
export function useRegressionAction() {
  return useOpMutation(
    ({
      id,
      action,
      by,
      comment,
    }: {
      id: string;
      action: 'ack' | 'resolve' | 'reopen';
      by?: string;
      comment?: string;
    }) =>
      request(`POST /api/v1/regressions/:id/${action}`, {
        params: { id },
        body: { ...(by ? { by } : {}), ...(comment ? { comment } : {}) },
      }),
    { stale: ['regressions', 'alerts'] },
  );
}

/**
 * `GET /api/v1/regressions/:id/cohort`: the series as its slow hosts' line and its fast hosts'
 * (a regression with a cohort), on the page's window.
 */
export function useRegressionCohort(
  id: string,
  range: { from: string; to: string },
  enabled = true,
) {
  return useOp(
    'GET /api/v1/regressions/:id/cohort',
    { params: { id }, query: { from: range.from, to: range.to, q: '0.5,0.99' } },
    { enabled, structuralSharing: false },
  );
}
