-- Up Migration

-- Alert type 'deploy_verdict': a deploy whose verdict failed (docs/verdicts.md),
-- one episode per marker (alert_key verdict:<deploy id>), through the same
-- webhooks as SLO burns and regressions.
ALTER TABLE alerts DROP CONSTRAINT alerts_type_check;
ALTER TABLE alerts ADD CONSTRAINT alerts_type_check
  CHECK (type IN ('slo_burn', 'regression', 'deploy_verdict'));

-- Down Migration
DELETE FROM alerts WHERE type = 'deploy_verdict';
ALTER TABLE alerts DROP CONSTRAINT alerts_type_check;
ALTER TABLE alerts ADD CONSTRAINT alerts_type_check
  CHECK (type IN ('slo_burn', 'regression'));
