-- Up Migration

-- Edge pairing: a client span and the server span whose parent it is form one
-- call. The pass walks observations by arrival time from a cursor; these
-- indexes make both directions of the join an index lookup.
CREATE INDEX observations_received ON observations (received_at);
CREATE INDEX observations_parent ON observations (trace_id, parent_span_id) WHERE parent_span_id IS NOT NULL;

CREATE TABLE pairing_state (
  id          boolean PRIMARY KEY DEFAULT true CHECK (id),
  cursor_at   timestamptz NOT NULL,
  pairs_total bigint NOT NULL DEFAULT 0,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE pairing_state;
DROP INDEX observations_parent;
DROP INDEX observations_received;
