-- Up Migration

-- A delta histogram point says which interval it covers (start, time]; the
-- same interval of the same stream again is that point sent again (a client
-- retrying an export it timed out on), not new data. Delta streams keep their
-- latest intervals here, as µs since 1970 in pairs [start, end, start, end…],
-- oldest first (apps/server/src/otlp/store-metrics.ts); their rows have layout
-- 'delta' and no buckets. Cumulative streams leave it NULL.
ALTER TABLE metric_streams ADD COLUMN delta_intervals bigint[];

-- Down Migration
DELETE FROM metric_streams WHERE layout = 'delta';
ALTER TABLE metric_streams DROP COLUMN delta_intervals;
