-- Up Migration

-- Arrival order on observations had two indexes: the BRIN of 0004 (SLO
-- counters) and the B-tree of 0006 (edge pairing). Rows arrive in
-- received_at order, so the BRIN answers the pairing's slice scans too
-- (received_at > cursor AND <= upto) at a fraction of the write cost: the
-- B-tree was one more index insert per span on the ingest path.
DROP INDEX IF EXISTS observations_received;

-- Down Migration
CREATE INDEX observations_received ON observations (received_at);
