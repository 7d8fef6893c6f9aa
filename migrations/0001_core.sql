-- Up Migration

-- Mirrors packages/core/src/histogram.ts bucketIndex(): γ = 1.01/0.99, zero bucket -1000000.
CREATE FUNCTION onset_bucket(us double precision) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN us > 0.001 THEN ceil(ln(us) / ln(1.01 / 0.99))::integer ELSE -1000000 END
$$;

-- What produced observations: a service on a host with its cohort attributes
-- (os.version, service.version, host.arch, dependency.*, onset.cohort.*).
CREATE TABLE resources (
  id          bigserial PRIMARY KEY,
  service     text NOT NULL,
  host        text NOT NULL,
  attrs       jsonb NOT NULL,
  attrs_key   text NOT NULL,
  first_seen  timestamptz NOT NULL DEFAULT now(),
  last_seen   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (service, host, attrs_key)
);

-- The series registry: one latency series per (service, op, view, name, peer).
CREATE TABLE series (
  id          bigserial PRIMARY KEY,
  service     text NOT NULL,
  op          text NOT NULL CHECK (op IN ('request','spawn','fsync','unmount','other')),
  view        text NOT NULL CHECK (view IN ('server','client','internal','gap')),
  name        text NOT NULL,
  peer        text NOT NULL DEFAULT '',
  first_seen  timestamptz NOT NULL DEFAULT now(),
  last_seen   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (service, op, view, name, peer)
);

-- Which resources feed which series (for host filters and cohort splits).
CREATE TABLE series_resources (
  series_id   bigint NOT NULL,
  resource_id bigint NOT NULL,
  first_seen  timestamptz NOT NULL DEFAULT now(),
  last_seen   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (series_id, resource_id)
);
CREATE INDEX series_resources_resource ON series_resources (resource_id);

-- Raw spans, partitioned by the day they were received so retention drops
-- whole partitions. (trace_id, span_id) is unique per day; ingest also checks
-- the previous day so an OTLP retry across midnight is not counted twice.
CREATE TABLE observations (
  received_day   date NOT NULL,
  received_at    timestamptz NOT NULL DEFAULT now(),
  trace_id       bytea NOT NULL,
  span_id        bytea NOT NULL,
  parent_span_id bytea,
  series_id      bigint NOT NULL,
  resource_id    bigint NOT NULL,
  start_time     timestamptz NOT NULL,
  duration_us    double precision NOT NULL,
  kind           smallint NOT NULL,
  attrs          jsonb
) PARTITION BY RANGE (received_day);
CREATE UNIQUE INDEX observations_span ON observations (trace_id, span_id, received_day);
CREATE INDEX observations_series_time ON observations (series_id, start_time);

-- Per-minute log-bucketed histograms (sparse: ascending bucket indices and
-- their counts). Ingest appends one row per (series, resource, minute) per
-- request; compaction folds rows of closed minutes together. Partitioned by
-- day of the minute, kept 90 days by default.
CREATE TABLE histograms (
  series_id   bigint NOT NULL,
  resource_id bigint NOT NULL,
  minute      timestamptz NOT NULL,
  count       bigint NOT NULL,
  sum_us      double precision NOT NULL,
  min_us      double precision NOT NULL,
  max_us      double precision NOT NULL,
  idx         integer[] NOT NULL,
  cnt         integer[] NOT NULL,
  compacted   boolean NOT NULL DEFAULT false
) PARTITION BY RANGE (minute);
CREATE INDEX histograms_series_minute ON histograms (series_id, minute);
CREATE INDEX histograms_uncompacted ON histograms (minute) WHERE NOT compacted;

-- Hourly rollups of the compacted minute rows, so a 30-day view reads ~720
-- rows instead of 43,200. Rebuilt for every hour that compaction touches;
-- queries add the not-yet-compacted minute rows on top.
CREATE TABLE histograms_hourly (
  series_id   bigint NOT NULL,
  resource_id bigint NOT NULL,
  hour        timestamptz NOT NULL,
  count       bigint NOT NULL,
  sum_us      double precision NOT NULL,
  min_us      double precision NOT NULL,
  max_us      double precision NOT NULL,
  idx         integer[] NOT NULL,
  cnt         integer[] NOT NULL,
  PRIMARY KEY (series_id, resource_id, hour)
) PARTITION BY RANGE (hour);

-- Cumulative OTLP metric streams: the last point seen, so the next cumulative
-- point can be turned into a delta.
CREATE TABLE metric_streams (
  stream_key  text PRIMARY KEY,
  start_time  timestamptz NOT NULL,
  last_time   timestamptz NOT NULL,
  idx         integer[] NOT NULL,
  cnt         bigint[] NOT NULL,
  count       bigint NOT NULL,
  sum_us      double precision NOT NULL
);

-- Down Migration
DROP TABLE metric_streams;
DROP TABLE histograms_hourly;
DROP TABLE histograms;
DROP TABLE observations;
DROP TABLE series_resources;
DROP TABLE series;
DROP TABLE resources;
DROP FUNCTION onset_bucket(double precision);
