-- Up Migration

-- A fourth shape (docs/detection.md "Tail collapses"): 'floor', a noisy p99
-- that settled onto a steady, higher band (a fixed wait such as a delayed
-- ACK on a share of calls), and that band before and after the onset.
ALTER TABLE regressions DROP CONSTRAINT IF EXISTS regressions_shape_check;
ALTER TABLE regressions
  ADD CONSTRAINT regressions_shape_check CHECK (shape IN ('step', 'transient', 'drift', 'floor')),
  ADD COLUMN band jsonb;

-- Down Migration
UPDATE regressions SET shape = 'step' WHERE shape = 'floor';
ALTER TABLE regressions DROP CONSTRAINT IF EXISTS regressions_shape_check;
ALTER TABLE regressions
  ADD CONSTRAINT regressions_shape_check CHECK (shape IN ('step', 'transient', 'drift')),
  DROP COLUMN band;
