#!/bin/sh
# First start of the PostgreSQL volume only (docker-entrypoint-initdb.d):
# the read-only role Grafana logs in with. Onset's migrations grant it SELECT
# on the grafana_* views when it exists, and nothing else.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v grafana_password="$ONSET_GRAFANA_DB_PASSWORD" <<'SQL'
CREATE ROLE onset_grafana LOGIN PASSWORD :'grafana_password';
-- Dashboards only read; a runaway panel query must not hold the database.
ALTER ROLE onset_grafana SET default_transaction_read_only = on;
ALTER ROLE onset_grafana SET statement_timeout = '60s';
SQL
