#!/bin/sh
# The citus compose profile (docs/citus.md "A cluster with compose"): run once by the coordinator's
# entrypoint when its data volume is new (docker-entrypoint-initdb.d, after the image's own script
# has created the citus extension in $POSTGRES_DB). The workers are healthy by then (the
# coordinator depends on them). Nodes connect to each other as $POSTGRES_USER with
# $POSTGRES_PASSWORD (pg_dist_authinfo, node 0 = every node; a password without spaces or quotes,
# as deploy/env.example's openssl rand -hex gives).
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v pw="$POSTGRES_PASSWORD" <<'SQL'
CREATE EXTENSION IF NOT EXISTS citus;
INSERT INTO pg_dist_authinfo (nodeid, rolename, authinfo)
  VALUES (0, current_user, 'password=' || :'pw');
SELECT citus_set_coordinator_host('citus-coordinator', 5432);
SELECT citus_add_node('citus-worker-1', 5432);
SELECT citus_add_node('citus-worker-2', 5432);
-- Keep the connections to the workers between transactions (docs/citus.md "Turning it on").
SELECT format('ALTER DATABASE %I SET citus.max_cached_conns_per_worker = 8', current_database())
\gexec
SQL
