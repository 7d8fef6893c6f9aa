-- Up Migration

-- Unique keys no longer grow with attribute text. A resource with 200
-- dependency.* attributes made (service, host, attrs_key) exceed PostgreSQL's
-- B-tree row limit (about 2.7 kB) and its export failed; a metric stream's key
-- held every data point attribute. Both keys become the sha256 (hex) of the
-- text they held, as the server now computes them (otlp/sanitize.ts
-- textDigest), so existing resources and streams keep their identity.
UPDATE resources SET attrs_key = encode(sha256(convert_to(attrs_key, 'UTF8')), 'hex')
 WHERE attrs_key LIKE '[%';
UPDATE metric_streams SET stream_key = encode(sha256(convert_to(stream_key, 'UTF8')), 'hex')
 WHERE stream_key LIKE '[%';

-- Down Migration
-- The keys stay hashed: a digest cannot be turned back into its text (the
-- attributes themselves are in resources.attrs).
SELECT 1;
