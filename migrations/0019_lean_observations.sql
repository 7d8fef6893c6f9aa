-- Up Migration

-- A leaner raw row (docs/scaling.md "What is stored per span"). Measured on
-- the ingest statement, the raw row's secondary indexes and attributes were
-- most of PostgreSQL's work per span, so:
--
-- * Every span still gets its row in `observations` (the dedup key, and the
--   halves edge pairing joins), but its attributes only when it is an
--   exemplar: ingest keeps the first few spans of each (series, resource,
--   minute) and then a thinning random share (otlp/exemplars.ts). Evidence
--   (exemplar traces, attribute lifts, hints) reads exemplars only, through a
--   partial index; the full (series_id, start_time) index is gone.
-- * The pairing index covers only server/consumer spans with a parent (the
--   only ones a pairing pass looks up by parent), not every child span.
-- * A new SLO's exact history is read from `span_durations`: the durations of
--   one (series, start minute) written by one ingest transaction, as one
--   array row (a handful of rows per transaction instead of an index entry per
--   span). Kept as long as the raw rows (ONSET_RAW_RETENTION).
--
-- Rows already stored keep their attributes and all become exemplars
-- (`exemplar` defaults to true), and their durations are carried into
-- `span_durations`, so evidence and SLO backfills read the same as before.

ALTER TABLE observations ADD COLUMN exemplar boolean NOT NULL DEFAULT true;
CREATE INDEX observations_exemplars ON observations (series_id, start_time) WHERE exemplar;
DROP INDEX observations_series_time;
DROP INDEX observations_parent;
CREATE INDEX observations_parent ON observations (trace_id, parent_span_id)
  WHERE parent_span_id IS NOT NULL AND kind IN (2, 5);

CREATE TABLE span_durations (
  received_day date NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now(),
  series_id    bigint NOT NULL,
  minute       timestamptz NOT NULL,
  durations    double precision[] NOT NULL
) PARTITION BY RANGE (received_day);
CREATE INDEX span_durations_series_minute ON span_durations (series_id, minute);

DO $$
DECLARE d date;
BEGIN
  FOR d IN SELECT DISTINCT received_day FROM observations LOOP
    EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF span_durations FOR VALUES FROM (%L) TO (%L)',
                   'span_durations_p' || to_char(d, 'YYYYMMDD'), d, d + 1);
  END LOOP;
END $$;

INSERT INTO span_durations (received_day, received_at, series_id, minute, durations)
SELECT received_day, received_at, series_id, date_trunc('minute', start_time, 'UTC'), array_agg(duration_us)
  FROM observations
 GROUP BY received_day, received_at, series_id, date_trunc('minute', start_time, 'UTC');

-- Down Migration
DROP TABLE span_durations;
DROP INDEX observations_parent;
CREATE INDEX observations_parent ON observations (trace_id, parent_span_id) WHERE parent_span_id IS NOT NULL;
CREATE INDEX observations_series_time ON observations (series_id, start_time);
DROP INDEX observations_exemplars;
ALTER TABLE observations DROP COLUMN exemplar;
