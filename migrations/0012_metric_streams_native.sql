-- Up Migration

-- Cumulative OTLP histogram streams are differenced in the sender's own
-- buckets (explicit bucket numbers, or exponential indexes at `scale`) before
-- the counts are placed, so placement never depends on earlier points.
-- Rows written before this (layout NULL) held Onset buckets: the next point
-- of such a stream only re-seeds its state.
ALTER TABLE metric_streams ADD COLUMN layout text;
ALTER TABLE metric_streams ADD COLUMN scale integer NOT NULL DEFAULT 0;

-- Down Migration
DELETE FROM metric_streams WHERE layout IS NOT NULL;
ALTER TABLE metric_streams DROP COLUMN scale;
ALTER TABLE metric_streams DROP COLUMN layout;
