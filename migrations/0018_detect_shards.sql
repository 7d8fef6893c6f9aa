-- Up Migration

-- Detection shared across servers (docs/scaling.md "N servers on one
-- PostgreSQL"): series are split into shards (series_id % shard count), and
-- each server leases a fair share of them; its scheduled passes detect only
-- the series of its shards, so its in-memory detectors stay warm. A lease
-- not renewed within its TTL (the server died or hung) is taken over by
-- another server, which continues from the checkpoints in regress_state.

-- Servers taking part, renewed with their leases: the count decides each one's fair share.
CREATE TABLE detect_members (
  server_id  text PRIMARY KEY,
  started_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);

-- One row per shard; the number of rows is the cluster's shard count (set by the first server).
CREATE TABLE detect_leases (
  shard      integer PRIMARY KEY CHECK (shard >= 0),
  owner      text,
  expires_at timestamptz NOT NULL DEFAULT '-infinity',
  since      timestamptz
);

-- Down Migration

DROP TABLE detect_leases;
DROP TABLE detect_members;
