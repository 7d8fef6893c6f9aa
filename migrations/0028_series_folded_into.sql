-- Up Migration

-- Pair first, then classify (docs/api.md "call on an edge"): a caller's own
-- client series whose calls pair with a callee is folded into the edge's
-- client view. NULL: never folded (its calls have not paired, e.g. an external
-- API); > 0: the edge client series its spans go to from then on (the registry
-- answers that id for its labels, and lists leave it out); 0: its calls pair
-- with more than one edge, so it stays the caller's own.
-- In one DO block: on Citus (series is a reference table) two commands in one query string
-- fail ("cannot insert multiple commands into a prepared statement"), see 0026.
DO $$
BEGIN
  ALTER TABLE series ADD COLUMN folded_into bigint;
  CREATE INDEX series_folded_into ON series (folded_into) WHERE folded_into > 0;
END
$$;

-- Down Migration
DO $$
BEGIN
  DROP INDEX series_folded_into;
  ALTER TABLE series DROP COLUMN folded_into;
END
$$;
