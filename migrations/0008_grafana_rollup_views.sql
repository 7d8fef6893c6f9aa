-- Up Migration

-- Long ranges in Grafana read the hourly rollups (migrations/0001
-- histograms_hourly, built by compaction) instead of 60× as many minute rows.
-- Each row says which resolution it belongs to:
--   rollup = '1m': every minute row (any step)
--   rollup = '1h': the hourly rollups plus the minute rows not compacted into
--                  them yet (steps that are whole hours), the same rule as the
--                  series API, so both give the same quantiles.
-- A panel picks one: WHERE rollup = CASE WHEN $__interval_ms % 3600000 = 0 THEN '1h' ELSE '1m' END
CREATE VIEW grafana_histograms_rollup AS
SELECT x.rollup, x.time, x.series_id, s.service, s.op, s.view, s.name, NULLIF(s.peer, '') AS peer,
       onset_series_label(s.service, s.view, s.name, s.peer) AS series,
       x.resource_id, r.host, r.attrs ->> 'os.version' AS os_version,
       r.attrs ->> 'service.version' AS service_version, r.attrs AS resource_attrs,
       x.count, x.sum_us, x.min_us, x.max_us, x.idx, x.cnt
  FROM (
    SELECT '1h'::text AS rollup, hh.hour AS time, hh.series_id, hh.resource_id, hh.count, hh.sum_us, hh.min_us, hh.max_us,
           hh.idx, hh.cnt::bigint[] AS cnt
      FROM histograms_hourly hh
    UNION ALL
    SELECT '1h'::text, h.minute, h.series_id, h.resource_id, h.count, h.sum_us, h.min_us, h.max_us, h.idx, h.cnt::bigint[]
      FROM histograms h WHERE NOT h.compacted
    UNION ALL
    SELECT '1m'::text, h.minute, h.series_id, h.resource_id, h.count, h.sum_us, h.min_us, h.max_us, h.idx, h.cnt::bigint[]
      FROM histograms h
  ) x
  JOIN series s ON s.id = x.series_id
  JOIN resources r ON r.id = x.resource_id;

-- grafana_latency_buckets over either resolution.
CREATE VIEW grafana_latency_rollup_buckets AS
SELECT g.rollup, g.time, g.series_id, g.service, g.op, g.view, g.name, g.peer, g.series,
       g.resource_id, g.host, g.os_version, g.service_version,
       b.bucket, b.count::bigint AS count,
       onset_bucket_upper(b.bucket) / 1000.0 AS le_ms,
       hb.heat_le_ms,
       CASE WHEN hb.heat_le_ms = 0 THEN '0'
            ELSE trim_scale(round(hb.heat_le_ms::numeric, greatest(0, 4 - ceil(log(hb.heat_le_ms))::int)))::text
       END AS heat_bucket
  FROM grafana_histograms_rollup g
  CROSS JOIN LATERAL unnest(g.idx, g.cnt) AS b(bucket, count)
  CROSS JOIN LATERAL (
    SELECT CASE WHEN b.bucket = -1000000 THEN 0::float8
                ELSE power(10::float8, ceil(round((10 * log(onset_bucket_upper(b.bucket) / 1000.0))::numeric, 9))::float8 / 10)
           END AS heat_le_ms
  ) hb;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'onset_grafana') THEN
    GRANT SELECT ON grafana_histograms_rollup, grafana_latency_rollup_buckets TO onset_grafana;
  END IF;
END $$;

-- Down Migration
DROP VIEW grafana_latency_rollup_buckets;
DROP VIEW grafana_histograms_rollup;
