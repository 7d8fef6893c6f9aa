-- Up Migration

-- Regressions (api.md "Regressions"): one row per step change found by the
-- detection engine (apps/server/src/regressions/). The series labels are
-- copied in so the list endpoint filters without a join; `change` keeps the
-- detector's own description of the step (µs) for the recovery check.
CREATE TABLE regressions (
  id                   bigserial PRIMARY KEY,
  series_id            bigint NOT NULL,
  service              text NOT NULL,
  op                   text NOT NULL,
  view                 text NOT NULL,
  name                 text NOT NULL,
  peer                 text NOT NULL DEFAULT '',
  -- Set only when the step is confined to one host of several.
  host                 text,
  onset                timestamptz NOT NULL,
  onset_uncertainty_ms integer NOT NULL DEFAULT 0,
  detected_at          timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  metric               text NOT NULL CHECK (metric IN ('p50', 'p99')),
  confidence           double precision NOT NULL,
  before               jsonb NOT NULL,
  after                jsonb NOT NULL,
  ratio_p50            double precision NOT NULL,
  ratio_p99            double precision NOT NULL,
  change               jsonb NOT NULL,
  -- after.count holds the events of minutes before this one.
  after_through        timestamptz NOT NULL,
  suspects             jsonb NOT NULL DEFAULT '[]',
  cohort               jsonb,
  attributed_at        timestamptz,
  status               text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'acknowledged', 'resolved')),
  acknowledged_at      timestamptz,
  acknowledged_by      text,
  resolved_at          timestamptz,
  resolved_by          text,
  resolution           text
);
CREATE INDEX regressions_series ON regressions (series_id, onset);
CREATE INDEX regressions_onset ON regressions (onset DESC);
CREATE INDEX regressions_active ON regressions (series_id) WHERE status <> 'resolved';

-- Per-series detector state (a compact binary form of the core detector's
-- state): it reflects every point of the minutes before `through`. A pass
-- feeds minutes from there on; a state older than the last pass is simply
-- replayed forward (detection is deterministic, regressions are deduplicated).
CREATE TABLE regress_state (
  series_id   bigint PRIMARY KEY,
  through     timestamptz NOT NULL,
  state       bytea NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The last pass, for /api/v1/detect and operators. Passes are serialised by
-- a session advisory lock, not by this row.
CREATE TABLE regress_pass (
  singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  passes       bigint NOT NULL DEFAULT 0,
  through      timestamptz,
  started_at   timestamptz,
  duration_ms  integer,
  result       jsonb
);
INSERT INTO regress_pass DEFAULT VALUES;

-- Regressions as Grafana region annotations (onset to resolution or now).
CREATE VIEW grafana_regression_annotations AS
SELECT r.id, r.onset AS time, coalesce(r.resolved_at, now()) AS timeend,
       r.service, r.op, r.view, r.name, nullif(r.peer, '') AS peer, r.status,
       concat_ws(' — ',
         format('%s %s "%s"%s (%s): p99 %s → %s ms', r.service, r.op, r.name,
                CASE WHEN r.peer <> '' THEN ' → ' || r.peer ELSE '' END, r.view,
                round((r.before ->> 'p99_ms')::numeric, 3), round((r.after ->> 'p99_ms')::numeric, 3)),
         'suspect: ' || (r.suspects -> 0 ->> 'reason'),
         CASE WHEN r.cohort IS NOT NULL THEN format('only %s = %s', r.cohort ->> 'attribute', r.cohort -> 'slow') END,
         r.status) AS text,
       concat_ws(',', 'regression', r.service, r.op, r.view) AS tags
  FROM regressions r;

INSERT INTO grafana_annotation_cursor (kind) VALUES ('regression') ON CONFLICT DO NOTHING;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'onset_grafana') THEN
    GRANT SELECT ON grafana_regression_annotations TO onset_grafana;
  END IF;
END $$;

-- Down Migration
DELETE FROM grafana_annotation_cursor WHERE kind = 'regression';
DROP VIEW grafana_regression_annotations;
DROP TABLE regress_pass;
DROP TABLE regress_state;
DROP TABLE regressions;
