/**
 * What an alert looks like to the outside: the snapshot taken at a state
 * change (what every webhook format renders from) and the UI link to it.
 * Owned here so webhooks take a snapshot and never read alert rows.
 */
import type { AlertType, Severity } from '@onset/contract';
import type { AlertRow } from './store.ts';
import { alertText } from './text.ts';

/** The alert as it was at a state change. */
export interface AlertSnapshot {
  id: string;
  type: AlertType | 'test';
  severity: Severity;
  title: string;
  service: string | null;
  op: string | null;
  view: string | null;
  series_name: string | null;
  slo_id: string | null;
  regression_id: string | null;
  burn_rate: number | null;
  window: string | null;
  started_at: string;
  resolved_at: string | null;
  details: Record<string, unknown>;
}

export function snapshotOf(a: AlertRow): AlertSnapshot {
  return {
    id: a.id,
    type: a.type,
    severity: a.severity,
    title: a.title,
    service: a.service,
    op: a.op,
    view: a.view,
    series_name: a.series_name,
    slo_id: a.slo_id,
    regression_id: a.regression_id,
    burn_rate: a.burn_rate,
    window: a.burn_window,
    started_at: a.started_at.toISOString(),
    resolved_at: a.resolved_at ? a.resolved_at.toISOString() : null,
    details: a.details,
  };
}

/**
 * Where the alert is shown in the UI: its alert page, where a paged engineer
 * lands (chart, suspects, hosts, burn, deliveries, acknowledge / silence /
 * resolve), linking on to its SLO or regression.
 */
export function alertUrl(a: { id: string }, baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/alerts/${encodeURIComponent(a.id)}`;
}

/**
 * The alert as every outside reader sees it (API and json webhooks): the
 * snapshot plus its link and its text (title = text.title), rendered from
 * the snapshot's own numbers.
 */
export function alertBody(s: AlertSnapshot, baseUrl: string) {
  const { details, ...fields } = s;
  const text = alertText(s);
  return { ...fields, title: text.title, text, url: alertUrl(s, baseUrl), details };
}
