/** Alerts: the inbox, one alert with its events, and acknowledging or resolving one. */
import type {
  Alert,
  AlertAck,
  AlertBulkAck,
  AlertBulkSilence,
  AlertListQuery,
  Silence,
} from '@onset/contract';
import { request } from '../../api/client.ts';
import { useOp, useOpMutation } from '../../api/useOp.ts';

export function useAlerts(filter: AlertListQuery = {}) {
  return useOp(
    'GET /api/v1/alerts',
    { query: filter },
    { select: (r) => r.alerts, keepPrevious: false },
  );
}

export function useAlert(id: string | undefined) {
  return useOp(
    'GET /api/v1/alerts/:id',
    { params: { id: id ?? '' } },
    {
      enabled: !!id,
      // Deliveries change on their own (retries): an alert page stays current.
      refresh: (page) => (page === false ? false : Math.min(page, 10_000)),
      keepPrevious: false,
    },
  );
}

/** Acknowledge or resolve an alert: `POST /api/v1/alerts/:id/{ack|resolve}` with who and why. */
export function useAlertAction() {
  return useOpMutation(
    ({ id, action, ...body }: { id: string; action: 'ack' | 'resolve' } & AlertAck) =>
      request(`POST /api/v1/alerts/:id/${action}`, { params: { id }, body }),
    { stale: ['alerts', 'regressions', 'slos'] },
  );
}

/**
 * The inbox's bulk actions, one request each: `POST /api/v1/alerts/ack` acknowledges every
 * selected alert, `POST /api/v1/alerts/silence` silences what each is about.
 */
export interface BulkDone {
  action: 'ack' | 'silence';
  alerts: Alert[];
  silences: Silence[];
}

export function useBulkAlertAction() {
  return useOpMutation(
    (
      op: { action: 'ack'; body: AlertBulkAck } | { action: 'silence'; body: AlertBulkSilence },
    ): Promise<BulkDone> =>
      op.action === 'ack'
        ? request('POST /api/v1/alerts/ack', { body: op.body }).then((r) => ({
            action: 'ack' as const,
            alerts: r.alerts,
            silences: [] as Silence[],
          }))
        : request('POST /api/v1/alerts/silence', { body: op.body }).then((r) => ({
            action: 'silence' as const,
            ...r,
          })),
    { stale: ['alerts', 'regressions', 'slos', 'silences'] },
  );
}
