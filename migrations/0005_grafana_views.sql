-- Up Migration

-- Stable, read-only SQL views for Grafana (deploy/grafana/). Dashboards query
-- only grafana_* views and onset_* functions, so the tables under them may
-- change without breaking anyone's dashboards: keep these column names.
-- Times are timestamptz named "time"; latencies are milliseconds (*_ms).

-- Representative value (µs) of log bucket i: 2·γ^i/(γ+1), γ = 1.01/0.99.
-- Mirrors packages/core/src/histogram.ts bucketValue(); the zero bucket is 0.
CREATE FUNCTION onset_bucket_value(i integer) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN i = -1000000 THEN 0::float8
              ELSE 2 * power(1.01::float8 / 0.99::float8, i) / (1.01::float8 / 0.99::float8 + 1) END
$$;

-- Upper bound (µs) of log bucket i: γ^i (bucketUpper()).
CREATE FUNCTION onset_bucket_upper(i integer) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN i = -1000000 THEN 0.001::float8 ELSE power(1.01::float8 / 0.99::float8, i) END
$$;

-- The q-quantile in milliseconds of a histogram given as bucket indices and
-- counts. The arrays need not be sorted and may repeat an index (e.g.
-- array_agg over many minutes): equal indices are merged first. Rank is
-- ceil(q·n) as in Histogram.quantile(), so SQL and the API agree; ≤ 1%
-- relative error, no clipping at any range. NULL for an empty histogram.
CREATE FUNCTION onset_quantile(idx integer[], cnt bigint[], q double precision) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  WITH b AS (
    SELECT u.i, sum(u.c) AS c FROM unnest(idx, cnt) AS u(i, c) WHERE u.c > 0 GROUP BY u.i
  ), r AS (
    SELECT b.i, sum(b.c) OVER (ORDER BY b.i) AS cum, sum(b.c) OVER () AS n FROM b
  )
  SELECT onset_bucket_value(r.i) / 1000.0 FROM r
   WHERE r.cum >= greatest(1, ceil(least(greatest(q, 0), 1) * r.n))
   ORDER BY r.i LIMIT 1
$$;

CREATE FUNCTION onset_quantile(idx integer[], cnt integer[], q double precision) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT onset_quantile(idx, cnt::bigint[], q)
$$;

-- Observations above a threshold (ms), at bucket resolution: what an SLO counts as "bad".
CREATE FUNCTION onset_count_above(idx integer[], cnt bigint[], threshold_ms double precision) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(sum(u.c), 0)::bigint FROM unnest(idx, cnt) AS u(i, c)
   WHERE u.i > onset_bucket(threshold_ms * 1000)
$$;

-- A readable one-line name for a series, used as the legend in Grafana.
CREATE FUNCTION onset_series_label(service text, view text, name text, peer text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT service || ' ' || view || ' ' || name || coalesce(' → ' || nullif(peer, ''), '')
$$;

-- Every latency series with its labels (template variables read this).
CREATE VIEW grafana_series AS
SELECT s.id AS series_id, s.service, s.op, s.view, s.name, NULLIF(s.peer, '') AS peer,
       onset_series_label(s.service, s.view, s.name, s.peer) AS series,
       s.first_seen, s.last_seen
  FROM series s;

-- Per-minute histograms per series and producing resource (host), with the
-- cohort attributes a kernel or dependency split is read from. Not merged:
-- a minute may have several rows; aggregate in the query.
CREATE VIEW grafana_histograms AS
SELECT h.minute AS time, h.series_id, s.service, s.op, s.view, s.name, NULLIF(s.peer, '') AS peer,
       onset_series_label(s.service, s.view, s.name, s.peer) AS series,
       h.resource_id, r.host, r.attrs ->> 'os.version' AS os_version,
       r.attrs ->> 'service.version' AS service_version, r.attrs AS resource_attrs,
       h.count, h.sum_us, h.min_us, h.max_us, h.idx, h.cnt::bigint[] AS cnt
  FROM histograms h
  JOIN series s ON s.id = h.series_id
  JOIN resources r ON r.id = h.resource_id;

-- One row per (minute, series, resource, log bucket): array_agg(bucket) and
-- array_agg(count) over any grouping feed onset_quantile(); heat_le_ms is
-- the bucket's upper bound rounded up to 10 rows per decade for heatmaps.
CREATE VIEW grafana_latency_buckets AS
SELECT g.time, g.series_id, g.service, g.op, g.view, g.name, g.peer, g.series,
       g.resource_id, g.host, g.os_version, g.service_version,
       b.bucket, b.count::bigint AS count,
       onset_bucket_upper(b.bucket) / 1000.0 AS le_ms,
       hb.heat_le_ms,
       -- The same bound as a short label ("0.01259", "1259"): heatmap rows are named by it.
       CASE WHEN hb.heat_le_ms = 0 THEN '0'
            ELSE trim_scale(round(hb.heat_le_ms::numeric, greatest(0, 4 - ceil(log(hb.heat_le_ms))::int)))::text
       END AS heat_bucket
  FROM grafana_histograms g
  CROSS JOIN LATERAL unnest(g.idx, g.cnt) AS b(bucket, count)
  CROSS JOIN LATERAL (
    SELECT CASE WHEN b.bucket = -1000000 THEN 0::float8
                ELSE power(10::float8, ceil(round((10 * log(onset_bucket_upper(b.bucket) / 1000.0))::numeric, 9))::float8 / 10)
           END AS heat_le_ms
  ) hb;

-- Per-minute merged histogram of each series (all resources) with summary
-- statistics; idx/cnt hold the merged buckets (unsorted, may repeat).
CREATE VIEW grafana_latency_minute AS
SELECT m.time, m.series_id, s.service, s.op, s.view, s.name, NULLIF(s.peer, '') AS peer,
       onset_series_label(s.service, s.view, s.name, s.peer) AS series,
       m.count, m.sum_us / NULLIF(m.count, 0) / 1000.0 AS mean_ms, m.min_us / 1000.0 AS min_ms, m.max_us / 1000.0 AS max_ms,
       onset_quantile(m.idx, m.cnt, 0.5) AS p50_ms,
       onset_quantile(m.idx, m.cnt, 0.9) AS p90_ms,
       onset_quantile(m.idx, m.cnt, 0.99) AS p99_ms,
       m.idx, m.cnt
  FROM (
    SELECT h.series_id, h.minute AS time, sum(h.count)::bigint AS count, sum(h.sum_us) AS sum_us,
           min(h.min_us) AS min_us, max(h.max_us) AS max_us,
           array_agg(b.i) AS idx, array_agg(b.c::bigint) AS cnt
      FROM histograms h CROSS JOIN LATERAL unnest(h.idx, h.cnt) AS b(i, c)
     GROUP BY h.series_id, h.minute
  ) m
  JOIN series s ON s.id = m.series_id;

-- Deploy markers as Grafana annotations: the kind (and service, source) in
-- tags, versions in the text, e.g. "kernel 4.4.0-138 → 4.15.0-36 on node-1".
CREATE VIEW grafana_deploy_annotations AS
SELECT d.id, d.at AS time, d.kind, d.service, d.hosts, d.component, d.from_version, d.to_version, d.source,
       concat_ws(' — ',
         concat_ws(' ',
           d.service || ':',
           d.kind,
           d.component,
           CASE WHEN d.from_version IS NOT NULL OR d.to_version IS NOT NULL
                THEN coalesce(d.from_version, '?') || ' → ' || coalesce(d.to_version, '?') END,
           CASE WHEN cardinality(d.hosts) > 0
                THEN 'on ' || array_to_string(d.hosts[1:5], ', ')
                     || CASE WHEN cardinality(d.hosts) > 5 THEN format(' (+%s more)', cardinality(d.hosts) - 5) ELSE '' END END,
           '(' || left(d.commit, 12) || ')'),
         d.description,
         CASE WHEN d.source = 'inferred' THEN 'inferred from resource attributes' END,
         d.url) AS text,
       concat_ws(',', 'deploy', d.kind, d.service, d.source) AS tags
  FROM deploys d;

-- Which markers Onset already posted to Grafana's HTTP API (GRAFANA_URL), per kind.
CREATE TABLE grafana_annotation_cursor (
  kind     text PRIMARY KEY,
  last_id  bigint NOT NULL DEFAULT 0,
  pushed_at timestamptz
);
INSERT INTO grafana_annotation_cursor (kind) VALUES ('deploy');

-- Grafana's database user sees the views and nothing else. Create the role
-- before the first start (deploy/postgres/initdb/ does in compose); views
-- read their tables with the owner's rights, so SELECT on them is enough.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'onset_grafana') THEN
    GRANT SELECT ON grafana_series, grafana_histograms, grafana_latency_buckets, grafana_latency_minute,
                    grafana_deploy_annotations TO onset_grafana;
  END IF;
END $$;

-- Down Migration
DROP TABLE grafana_annotation_cursor;
DROP VIEW grafana_deploy_annotations;
DROP VIEW grafana_latency_minute;
DROP VIEW grafana_latency_buckets;
DROP VIEW grafana_histograms;
DROP VIEW grafana_series;
DROP FUNCTION onset_series_label(text, text, text, text);
DROP FUNCTION onset_count_above(integer[], bigint[], double precision);
DROP FUNCTION onset_quantile(integer[], integer[], double precision);
DROP FUNCTION onset_quantile(integer[], bigint[], double precision);
DROP FUNCTION onset_bucket_upper(integer);
DROP FUNCTION onset_bucket_value(integer);
