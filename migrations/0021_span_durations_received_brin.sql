-- Up Migration

-- The SLO counting pass reads the durations received since its cursor from
-- `span_durations` (one array per series, start minute and ingest
-- transaction) instead of one `observations` row per span
-- (apps/server/src/slos/store.ts). Rows arrive in received_at order, so a
-- BRIN finds that slice at the cost of a few pages, as it does for
-- observations (0004, 0011).
CREATE INDEX span_durations_received_at_brin ON span_durations USING brin (received_at);

-- Down Migration
DROP INDEX span_durations_received_at_brin;
