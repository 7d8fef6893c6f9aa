-- For a database that existed before Grafana's role: create the role, then
-- grant it the Grafana views (migrations grant them only when the role exists).
--   psql "$DATABASE_URL" -v grafana_password=... -f deploy/postgres/grant-grafana.sql
SELECT format('CREATE ROLE onset_grafana LOGIN PASSWORD %L', :'grafana_password')
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'onset_grafana') \gexec
ALTER ROLE onset_grafana SET default_transaction_read_only = on;
ALTER ROLE onset_grafana SET statement_timeout = '60s';
SELECT format('GRANT SELECT ON %I TO onset_grafana', c.relname)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public' AND c.relkind = 'v' AND c.relname LIKE 'grafana\_%' \gexec
