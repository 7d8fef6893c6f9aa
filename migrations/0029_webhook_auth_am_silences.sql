-- Up Migration

-- Receivers that need credentials (docs/webhooks.md "Credentials"): basic or
-- bearer auth, or one custom header, sent with every request to the webhook.
-- Stored like the signing secret, never returned by the API.
ALTER TABLE webhooks ADD COLUMN auth jsonb;

-- Onset silences mirrored into each `alertmanager` target as Alertmanager
-- silences (POST /api/v2/silences), expired there when the Onset silence ends.
CREATE TABLE alertmanager_silences (
  webhook_id bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  silence_id bigint NOT NULL REFERENCES silences (id) ON DELETE CASCADE,
  am_silence_id text,
  ends_at timestamptz NOT NULL,
  expired_at timestamptz,
  last_error text,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (webhook_id, silence_id)
);

-- Down Migration
DROP TABLE alertmanager_silences;
ALTER TABLE webhooks DROP COLUMN auth;
