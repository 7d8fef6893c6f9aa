/** Shapes of the public API (docs/api.md) as the UI reads them. Optional fields are tolerated, never required. */

export type Op = 'request' | 'spawn' | 'fsync' | 'unmount' | 'other';
export type View = 'server' | 'client' | 'internal' | 'gap';
export type DeployKind = 'code' | 'dependency' | 'kernel' | 'config' | 'infra';

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

export interface QuantilesResponse {
  series: Series;
  from: string;
  to: string;
  step_ms: number;
  points: QuantilePoint[];
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
  attributes: Array<{ key: string; values: Array<{ value: string; hosts: string[]; last_seen: string }> }>;
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
  cohort?: { attribute: string; slow: string[]; fast: string[] } | null;
  status: 'open' | 'acknowledged' | 'resolved' | string;
  severity?: number;
}

export interface SloStatus {
  sli: number | null;
  budget_remaining: number | null;
  burn_rates: Record<string, number | null>;
  alert: null | { severity: 'page' | 'ticket' | string; since: string; window?: string; burn_rate?: number };
}

export interface Slo {
  id: string;
  name: string;
  service: string;
  op?: string | null;
  view?: string | null;
  name_match?: string | null;
  threshold_ms: number;
  objective: number;
  window: string;
  status?: SloStatus;
  created_at?: string;
}

export interface AlertEvent {
  id: string;
  type?: string;
  slo_id?: string | null;
  regression_id?: string | null;
  severity: string;
  status?: string;
  title?: string;
  burn_rate?: number | null;
  window?: string | null;
  started_at: string;
  resolved_at?: string | null;
}

export interface Webhook {
  id: string;
  url: string;
  format: 'json' | 'slack' | 'pagerduty' | 'alertmanager' | string;
  min_severity?: 'page' | 'ticket' | string | null;
  created_at?: string;
  has_secret?: boolean;
}

export interface Delivery {
  id: string;
  webhook_id?: string;
  status: string;
  attempts?: number;
  response_status?: number | null;
  last_status?: number | null;
  last_error?: string | null;
  error?: string | null;
  dedup_key?: string | null;
  event?: string | null;
  alert_status?: string | null;
  created_at?: string;
  delivered_at?: string | null;
  next_attempt_at?: string | null;
}
