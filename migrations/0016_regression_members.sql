-- Up Migration

-- One incident, one regression (docs/regressions.md "One incident, one
-- regression"): the steps found on the series of one incident (the client,
-- gap and server views of an edge; several routes or executables of one
-- service around the same onset) are the members of one regression. The
-- regression row carries its headline member's evidence (the API's existing
-- fields); each member keeps its own, updated by every pass that feeds its
-- series. `change` and `after_through` play the role they play on the row.
CREATE TABLE regression_members (
  regression_id        bigint NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
  series_id            bigint NOT NULL,
  service              text NOT NULL,
  op                   text NOT NULL,
  view                 text NOT NULL,
  name                 text NOT NULL,
  peer                 text NOT NULL DEFAULT '',
  onset                timestamptz NOT NULL,
  onset_uncertainty_ms integer NOT NULL DEFAULT 0,
  detected_at          timestamptz NOT NULL,
  metric               text NOT NULL CHECK (metric IN ('p50', 'p99')),
  confidence           double precision NOT NULL,
  before               jsonb NOT NULL,
  after                jsonb NOT NULL,
  ratio_p50            double precision NOT NULL,
  ratio_p99            double precision NOT NULL,
  change               jsonb NOT NULL,
  after_through        timestamptz NOT NULL,
  -- The hosts that reported this series since the onset.
  hosts                text[] NOT NULL DEFAULT '{}',
  headline             boolean NOT NULL DEFAULT false,
  -- Set while this member's latency is back at its before level; the
  -- regression resolves when every member is back.
  recovered_at         timestamptz,
  recovery             text,
  PRIMARY KEY (regression_id, series_id, onset)
);
CREATE INDEX regression_members_series ON regression_members (series_id, onset);
CREATE INDEX regression_members_onset ON regression_members (onset);
CREATE UNIQUE INDEX regression_members_one_headline ON regression_members (regression_id) WHERE headline;

-- Every regression so far is an incident of one member: itself.
INSERT INTO regression_members (regression_id, series_id, service, op, view, name, peer, onset, onset_uncertainty_ms,
                                detected_at, metric, confidence, before, after, ratio_p50, ratio_p99, change,
                                after_through, hosts, headline, recovered_at, recovery)
SELECT id, series_id, service, op, view, name, peer, onset, onset_uncertainty_ms, detected_at, metric, confidence,
       before, after, ratio_p50, ratio_p99, change, after_through,
       CASE WHEN host IS NOT NULL THEN ARRAY[host] ELSE '{}'::text[] END, true,
       CASE WHEN resolved_by = 'onset' THEN resolved_at END,
       CASE WHEN resolved_by = 'onset' THEN resolution END
  FROM regressions;

-- Down Migration
DROP TABLE regression_members;
