-- Up Migration

-- One incident, one regression, whatever the order steps are found in
-- (docs/regressions.md "One incident, one regression"): a regression that
-- turns out to be the same incident as an older one is merged into it, its
-- members moved, and closed with `merged_into` naming the survivor.
-- Onset's own noise (docs/regressions.md "Onset's own noise"): `own` is
-- 'agent-probe' for a step on the agent's synthetic probe series,
-- 'onset-database' for Onset's own embedded PostgreSQL; such a regression
-- never groups with another incident and never pages. NULL otherwise.
-- In one DO block (one command per query string on Citus, see 0026).
DO $$
BEGIN
  ALTER TABLE regressions ADD COLUMN merged_into bigint, ADD COLUMN own text;
END
$$;

-- Down Migration
DO $$
BEGIN
  ALTER TABLE regressions DROP COLUMN merged_into, DROP COLUMN own;
END
$$;
