/**
 * Complete API objects for the UI's unit tests, typed by the contract: a test
 * states only the fields it is about, and a contract change breaks the build
 * here instead of leaving the UI tests on a shape the server no longer sends.
 */
import type { Deploy, Regression, Series, Slo, SloStatus } from '@onset/contract';

const EPOCH = '2026-11-20T10:00:00.000Z';

export const seriesOf = (over: Partial<Series> = {}): Series => ({
  id: '1',
  service: 's',
  op: 'request',
  view: 'server',
  name: 'n',
  peer: null,
  hosts: [],
  first_seen: EPOCH,
  last_seen: EPOCH,
  calls_from: 'spans',
  metrics_not_counted: false,
  ...over,
});

export const regressionOf = (over: Partial<Regression> = {}): Regression => ({
  id: 'r',
  series_id: '1',
  service: 'checkout',
  op: 'request',
  view: 'gap',
  name: 'GET /lookup',
  peer: null,
  host: null,
  onset: EPOCH,
  onset_uncertainty_ms: 0,
  detected_at: EPOCH,
  updated_at: EPOCH,
  metric: 'p99',
  confidence: 1,
  before: { p50_ms: 1, p99_ms: 1, count: 0 },
  after: { p50_ms: 1, p99_ms: 1, count: 0 },
  ratio_p50: 1,
  ratio_p99: 1,
  suspects: [],
  hints: [],
  cohort: null,
  status: 'open',
  acknowledged_at: null,
  acknowledged_by: null,
  resolved_at: null,
  resolved_by: null,
  resolution: null,
  shape: 'step',
  drift_per_hour: null,
  members: [],
  ...over,
});

const perWindow = <T>(v: T) => ({
  '5m': v,
  '30m': v,
  '1h': v,
  '2h': v,
  '6h': v,
  '1d': v,
  '3d': v,
});

export const sloStatusOf = (over: Partial<SloStatus> = {}): SloStatus => ({
  evaluated_at: EPOCH,
  window_start: EPOCH,
  window_end: EPOCH,
  sli: null,
  good: 0,
  total: 0,
  budget_remaining: 1,
  burn_rates: perWindow(null),
  events: perWindow(0),
  tiers: [],
  alert: null,
  exact_since: null,
  ...over,
});

export const sloOf = (over: Partial<Slo> = {}): Slo => ({
  id: 's',
  name: 'slo',
  description: null,
  service: 'checkout',
  op: null,
  view: null,
  name_match: null,
  peer: null,
  series_id: null,
  threshold_ms: 100,
  objective: 0.99,
  window: '28d',
  calendar: false,
  time_zone: 'UTC',
  alert_tiers: {},
  min_events: 20,
  min_bad_events: 2,
  labels: {},
  source: 'api',
  exact_since: null,
  created_at: EPOCH,
  updated_at: EPOCH,
  status: sloStatusOf(),
  ...over,
});

export const deployOf = (over: Partial<Deploy> = {}): Deploy => ({
  id: '1',
  service: null,
  environment: null,
  hosts: [],
  kind: 'code',
  component: null,
  from_version: null,
  to_version: null,
  commit: null,
  url: null,
  description: null,
  at: EPOCH,
  source: 'api',
  external_id: null,
  created_at: EPOCH,
  updated_at: null,
  ...over,
});
