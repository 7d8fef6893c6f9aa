-- Up Migration

-- op 'host': a host's own resources as the agent measures them each minute
-- (CPU time stolen by the hypervisor, time tasks waited for a CPU). They are
-- context for other series' steps (a step while its hosts' CPU was contended
-- is held, docs/regressions.md), never detected as regressions of their own.
-- In one DO block: on Citus (series is a reference table) two ALTERs in one query string fail
-- ("cannot insert multiple commands into a prepared statement") and one ALTER with both actions
-- is refused ("cannot execute ADD CONSTRAINT command with other subcommands").
DO $$
BEGIN
  ALTER TABLE series DROP CONSTRAINT series_op_check;
  ALTER TABLE series ADD CONSTRAINT series_op_check
    CHECK (op IN ('request','spawn','fsync','unmount','other','host'));
END
$$;

-- Down Migration
DELETE FROM series WHERE op = 'host';
ALTER TABLE series DROP CONSTRAINT series_op_check;
ALTER TABLE series ADD CONSTRAINT series_op_check
  CHECK (op IN ('request','spawn','fsync','unmount','other'));
