-- Up Migration

-- Durations arrays written from now on are sorted ascending (`sorted`), so the
-- SLO counting pass counts a threshold's good events in each with one binary
-- search (width_bucket) instead of a scan of every element
-- (apps/server/src/slos/store.ts). Arrays stored before keep `false` and are
-- still counted element by element; they leave with raw retention.
ALTER TABLE span_durations ADD COLUMN sorted boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE span_durations DROP COLUMN sorted;
