-- Up Migration

-- `alertmanager` now POSTs PostableAlerts to Alertmanager's /api/v2/alerts;
-- the receiver-shaped payload it sent before is the format
-- `alertmanager-webhook`.
ALTER TABLE webhooks DROP CONSTRAINT IF EXISTS webhooks_format_check;
ALTER TABLE webhooks ADD CONSTRAINT webhooks_format_check
  CHECK (format IN ('json', 'slack', 'pagerduty', 'alertmanager', 'alertmanager-webhook'));

-- Down Migration
UPDATE webhooks SET format = 'alertmanager' WHERE format = 'alertmanager-webhook';
ALTER TABLE webhooks DROP CONSTRAINT IF EXISTS webhooks_format_check;
ALTER TABLE webhooks ADD CONSTRAINT webhooks_format_check
  CHECK (format IN ('json', 'slack', 'pagerduty', 'alertmanager'));
