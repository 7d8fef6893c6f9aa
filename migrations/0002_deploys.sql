-- Up Migration

-- Deploy markers (api.md "Deploy markers"): posted by CI hooks (source 'api')
-- or inferred from resource attributes (source 'inferred'). The detection
-- engine reads this table for attribution, so the column names are the API's.
CREATE TABLE deploys (
  id            bigserial PRIMARY KEY,
  service       text,
  environment   text,
  hosts         text[] NOT NULL DEFAULT '{}',
  kind          text NOT NULL CHECK (kind IN ('code','dependency','kernel','config','infra')),
  component     text,
  from_version  text,
  to_version    text,
  commit        text,
  url           text,
  description   text,
  at            timestamptz NOT NULL,
  source        text NOT NULL CHECK (source IN ('api','inferred')),
  -- CI retries send the same external_id; the unique index makes them one marker.
  external_id   text UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz,
  -- Inferred markers only: the latest host change folded into this marker, so
  -- a slow rollout keeps extending one marker instead of starting new ones.
  inferred_last_at timestamptz,
  CHECK (service IS NOT NULL OR cardinality(hosts) > 0)
);
CREATE INDEX deploys_at ON deploys (at);
CREATE INDEX deploys_service_at ON deploys (service, at);
CREATE INDEX deploys_hosts ON deploys USING gin (hosts);

-- Inference state: every value seen per (service, host, attribute), with the
-- time of its first observation (span time) and the marker it produced.
CREATE TABLE deploy_inference_values (
  service    text NOT NULL,
  host       text NOT NULL,
  attribute  text NOT NULL,
  value      text NOT NULL,
  first_at   timestamptz NOT NULL,
  deploy_id  bigint,
  PRIMARY KEY (service, host, attribute, value)
);

-- One-row cursor: resources with id <= last_resource_id are settled.
CREATE TABLE deploy_inference_cursor (
  singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  last_resource_id bigint NOT NULL DEFAULT 0
);
INSERT INTO deploy_inference_cursor DEFAULT VALUES;

-- The inference pass looks up a resource's first observation
-- (min(minute) WHERE resource_id = ...); without this it scans every partition.
CREATE INDEX histograms_resource_minute ON histograms (resource_id, minute);

-- Down Migration
DROP INDEX histograms_resource_minute;
DROP TABLE deploy_inference_cursor;
DROP TABLE deploy_inference_values;
DROP TABLE deploys;
