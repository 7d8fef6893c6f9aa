-- Up Migration

-- The shape of a regression (docs/detection.md "Shapes"): a step, a burst
-- that was over within minutes and closed without paging ('transient'), or
-- a sustained ramp reported once ('drift') with its growth factor per hour.
ALTER TABLE regressions
  ADD COLUMN shape text NOT NULL DEFAULT 'step' CHECK (shape IN ('step', 'transient', 'drift')),
  ADD COLUMN drift_per_hour double precision;
