-- Up Migration

-- The evidence hints of a regression (api.md "Evidence"), computed from raw
-- spans when detection opens it and refreshed whenever its evidence is read,
-- so the list and alerts carry them without reading spans.
ALTER TABLE regressions ADD COLUMN hints jsonb NOT NULL DEFAULT '[]'::jsonb;

-- Down Migration
ALTER TABLE regressions DROP COLUMN hints;
