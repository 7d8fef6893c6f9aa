-- Up Migration

-- SLO specs: a latency threshold over a series selector (or one series).
CREATE TABLE slos (
  id             bigserial PRIMARY KEY,
  name           text NOT NULL,
  description    text,
  service        text NOT NULL,
  op             text,
  view           text,
  name_match     text,             -- PostgreSQL regular expression on series.name
  peer           text,
  series_id      bigint,           -- set: exactly this series (one-click SLOs)
  threshold_us   double precision NOT NULL CHECK (threshold_us > 0),
  objective      double precision NOT NULL CHECK (objective > 0 AND objective < 1),
  window_text    text NOT NULL,    -- "28d", "1M" ...
  window_kind    text NOT NULL CHECK (window_kind IN ('rolling', 'calendar')),
  window_ms      bigint,           -- rolling windows
  calendar_unit  text CHECK (calendar_unit IN ('day', 'week', 'month')),
  time_zone      text NOT NULL DEFAULT 'UTC',
  tiers          jsonb NOT NULL DEFAULT '{}',  -- {"page_1h": false, ...}: switched-off tiers
  min_events     integer NOT NULL DEFAULT 20,
  min_bad_events integer NOT NULL DEFAULT 2,
  labels         jsonb NOT NULL DEFAULT '{}',
  source         text NOT NULL DEFAULT 'api',  -- api | openslo | suggestion
  openslo        text,             -- the imported document, verbatim
  exact_since    timestamptz,      -- counters before this are estimated from histograms
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX slos_service ON slos (service);

-- Exact good/total counters per SLO, by the minute the observation started.
-- Minutes are kept ~3 days (the longest burn window); hours and UTC days for
-- the SLO window, so a 28-day window reads ~30 rows, not 40,320.
CREATE TABLE slo_minutes (
  slo_id  bigint NOT NULL REFERENCES slos (id) ON DELETE CASCADE,
  minute  timestamptz NOT NULL,
  good    bigint NOT NULL,
  total   bigint NOT NULL,
  -- Covering: window sums are index-only scans.
  PRIMARY KEY (slo_id, minute) INCLUDE (good, total)
);
CREATE INDEX slo_minutes_minute ON slo_minutes (minute);

CREATE TABLE slo_hours (
  slo_id  bigint NOT NULL REFERENCES slos (id) ON DELETE CASCADE,
  hour    timestamptz NOT NULL,
  good    bigint NOT NULL,
  total   bigint NOT NULL,
  PRIMARY KEY (slo_id, hour) INCLUDE (good, total)
);

CREATE TABLE slo_days (
  slo_id  bigint NOT NULL REFERENCES slos (id) ON DELETE CASCADE,
  day     timestamptz NOT NULL,   -- UTC midnight
  good    bigint NOT NULL,
  total   bigint NOT NULL,
  PRIMARY KEY (slo_id, day) INCLUDE (good, total)
);

-- The counting cursor over observations.received_at: everything received at
-- or before it has been counted into slo_minutes/slo_hours, exactly once.
CREATE TABLE slo_counter_state (
  id            integer PRIMARY KEY CHECK (id = 1),
  cursor        timestamptz NOT NULL,
  retention_at  timestamptz NOT NULL DEFAULT '-infinity'
);

-- Lets the counting pass read only newly received spans (cheap on ingest: BRIN).
CREATE INDEX observations_received_at_brin ON observations USING brin (received_at);

-- Alerts: one row per episode (firing -> resolved) of an SLO burn or a regression.
CREATE TABLE alerts (
  id              bigserial PRIMARY KEY,
  type            text NOT NULL CHECK (type IN ('slo_burn', 'regression')),
  alert_key       text NOT NULL,   -- what it is about: slo:<id>:<severity> | regression:<id>
  dedup_key       text NOT NULL UNIQUE,
  severity        text NOT NULL CHECK (severity IN ('page', 'ticket')),
  status          text NOT NULL CHECK (status IN ('firing', 'resolved')),
  title           text NOT NULL,
  service         text,
  op              text,
  view            text,
  series_name     text,
  slo_id          bigint,          -- no FK: history outlives a deleted SLO
  regression_id   text,
  burn_rate       double precision,
  burn_window     text,
  details         jsonb NOT NULL DEFAULT '{}',
  started_at      timestamptz NOT NULL,
  resolved_at     timestamptz,
  notified        boolean NOT NULL DEFAULT false,
  silenced_by     bigint,
  acknowledged_at timestamptz,
  acknowledged_by text,
  ack_comment     text,
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX alerts_one_firing ON alerts (alert_key) WHERE status = 'firing';
CREATE INDEX alerts_started ON alerts (started_at DESC);
CREATE INDEX alerts_slo ON alerts (slo_id, started_at DESC);

CREATE TABLE alert_events (
  id        bigserial PRIMARY KEY,
  alert_id  bigint NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
  at        timestamptz NOT NULL,
  kind      text NOT NULL,         -- firing | resolved | acknowledged | silenced | notified
  actor     text,
  detail    jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX alert_events_alert ON alert_events (alert_id, id);

CREATE TABLE silences (
  id          bigserial PRIMARY KEY,
  service     text,
  slo_id      bigint,
  op          text,
  starts_at   timestamptz NOT NULL,
  ends_at     timestamptz NOT NULL,
  comment     text NOT NULL,
  created_by  text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CHECK (service IS NOT NULL OR slo_id IS NOT NULL OR op IS NOT NULL),
  CHECK (ends_at > starts_at)
);
CREATE INDEX silences_ends ON silences (ends_at);

CREATE TABLE webhooks (
  id            bigserial PRIMARY KEY,
  name          text,
  url           text NOT NULL,
  format        text NOT NULL CHECK (format IN ('json', 'slack', 'pagerduty', 'alertmanager')),
  secret        text,
  routing_key   text,
  min_severity  text NOT NULL DEFAULT 'ticket' CHECK (min_severity IN ('page', 'ticket')),
  enabled       boolean NOT NULL DEFAULT true,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- The outbox: written in the same transaction as the alert state change,
-- then delivered (at least once) by the delivery pass.
CREATE TABLE webhook_deliveries (
  id               bigserial PRIMARY KEY,
  webhook_id       bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  alert_id         bigint REFERENCES alerts (id) ON DELETE CASCADE,
  event            text NOT NULL CHECK (event IN ('firing', 'resolved', 'test')),
  dedup_key        text NOT NULL,
  payload          jsonb NOT NULL,  -- the alert as of the state change
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'expired')),
  attempts         integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL,
  next_attempt_at  timestamptz NOT NULL,
  leased_until     timestamptz,
  delivered_at     timestamptz,
  last_status_code integer,
  last_error       text
);
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (webhook_id, alert_id, event) WHERE alert_id IS NOT NULL;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (webhook_id, id DESC);

-- The delivery log: every attempt with its HTTP status or error.
CREATE TABLE webhook_attempts (
  id           bigserial PRIMARY KEY,
  delivery_id  bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  at           timestamptz NOT NULL,
  status_code  integer,
  error        text,
  duration_ms  double precision NOT NULL,
  response     text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- Down Migration
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
DROP TABLE silences;
DROP TABLE alert_events;
DROP TABLE alerts;
DROP INDEX IF EXISTS observations_received_at_brin;
DROP TABLE slo_counter_state;
DROP TABLE slo_days;
DROP TABLE slo_hours;
DROP TABLE slo_minutes;
DROP TABLE slos;
