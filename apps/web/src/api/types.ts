/** Shapes of the public API (docs/api.md) as the UI reads them. Optional fields are tolerated, never required. */

import type { DeployKind, Op, View } from '@onset/contract';

export type { DeployKind, Op, View };

export interface Series {
  id: string;
  service: string;
  op: Op | string;
  view: View | string;
  name: string;
  peer: string | null;
  hosts: string[];
  first_seen: string;
  last_seen: string;
}

export interface QuantilePoint {
  t: string;
  count: number;
  q: Record<string, number>;
}

/**
 * `GET /api/v1/series/{id}/quantiles?layout=columns`: one array per field (what
 * the charts draw), a third of the bytes of the points layout and several times
 * faster to parse. `t` is the step start in epoch ms, ascending; steps without
 * data are absent.
 */
export interface QuantilesResponse {
  series: Series;
  from: string;
  to: string;
  step_ms: number;
  columns: QuantileColumns;
}

export interface QuantileColumns {
  t: number[];
  count: number[];
  q: Record<string, Array<number | null>>;
}

export interface HeatmapPoint {
  t: string;
  count: number;
  idx: number[];
  cnt: number[];
}

export interface HeatmapResponse {
  series_id: string;
  from: string;
  to: string;
  step_ms: number;
  points: HeatmapPoint[];
}

export interface CohortsResponse {
  series_id: string;
  attributes: Array<{
    key: string;
    values: Array<{ value: string; hosts: string[]; last_seen: string }>;
  }>;
}

export interface Deploy {
  id: string;
  service?: string | null;
  environment?: string | null;
  hosts?: string[] | null;
  kind: DeployKind | string;
  component?: string | null;
  from_version?: string | null;
  to_version?: string | null;
  commit?: string | null;
  url?: string | null;
  description?: string | null;
  at: string;
  source?: 'api' | 'inferred' | string;
}

export interface Level {
  p50_ms: number;
  p99_ms: number;
  count: number;
}

export interface Suspect {
  deploy_id: string;
  kind: string;
  service?: string | null;
  component?: string | null;
  from_version?: string | null;
  to_version?: string | null;
  hosts?: string[] | null;
  at?: string | null;
  source?: 'api' | 'inferred' | string;
  commit?: string | null;
  url?: string | null;
  description?: string | null;
  score: number;
  reason: string;
}

export interface Regression {
  id: string;
  series_id?: string | null;
  service: string;
  op: string;
  view: string;
  name: string;
  peer?: string | null;
  host?: string | null;
  onset: string;
  detected_at?: string;
  before: Level;
  after: Level;
  ratio_p50: number;
  ratio_p99: number;
  suspects?: Suspect[];
  cohort?: {
    attribute: string;
    slow: string[];
    fast: string[];
    slow_hosts?: string[];
    fast_hosts?: string[];
  } | null;
  status: 'open' | 'acknowledged' | 'resolved' | string;
  /** The quantile that moved most. */
  metric?: 'p50' | 'p99' | string;
  confidence?: number;
  onset_uncertainty_ms?: number;
  acknowledged_at?: string | null;
  acknowledged_by?: string | null;
  resolved_at?: string | null;
  resolution?: string | null;
  severity?: number;
}

export interface SloTier {
  name: string;
  severity: 'page' | 'ticket' | string;
  long: string;
  short: string;
  enabled: boolean;
  factor: number;
  burn_long: number | null;
  burn_short: number | null;
  events_long?: number;
  events_short?: number;
  firing: boolean;
}

export interface SloStatus {
  evaluated_at?: string;
  window_start?: string;
  window_end?: string;
  sli: number | null;
  good?: number;
  total?: number;
  budget_remaining: number | null;
  burn_rates: Record<string, number | null>;
  events?: Record<string, number>;
  tiers?: SloTier[];
  alert: null | {
    id?: string;
    severity: 'page' | 'ticket' | string;
    since: string;
    acknowledged?: boolean;
  };
}

export interface Slo {
  id: string;
  name: string;
  description?: string | null;
  service: string;
  op?: string | null;
  view?: string | null;
  name_match?: string | null;
  peer?: string | null;
  series_id?: string | null;
  threshold_ms: number;
  objective: number;
  window: string;
  calendar?: boolean;
  status?: SloStatus;
  created_at?: string;
}

export interface AlertEvent {
  id: string;
  type?: 'slo_burn' | 'regression' | string;
  severity: 'page' | 'ticket' | string;
  status?: 'firing' | 'resolved' | string;
  title?: string;
  service?: string | null;
  slo_id?: string | null;
  regression_id?: string | null;
  burn_rate?: number | null;
  window?: string | null;
  started_at: string;
  resolved_at?: string | null;
  url?: string;
  notified?: boolean;
  silenced_by?: string | null;
  acknowledged?: { at: string; by: string | null; comment: string | null } | null;
  events?: Array<{
    at: string;
    kind: string;
    actor: string | null;
    detail: Record<string, unknown>;
  }>;
}

export interface Webhook {
  id: string;
  name?: string | null;
  url: string;
  format: 'json' | 'slack' | 'pagerduty' | 'alertmanager' | string;
  min_severity?: 'page' | 'ticket' | string | null;
  enabled?: boolean;
  has_secret?: boolean;
  routing_key?: string | null;
  created_at?: string;
}

export interface DeliveryAttempt {
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface Delivery {
  id: string;
  event: string;
  alert_id?: string | null;
  dedup_key?: string;
  status: 'pending' | 'delivered' | 'failed' | 'expired' | string;
  attempts: number;
  created_at: string;
  next_attempt_at?: string | null;
  delivered_at?: string | null;
  last_status_code?: number | null;
  last_error?: string | null;
  log?: DeliveryAttempt[];
}
