-- Up Migration

-- Grafana views over SLOs and alerts (migrations/0004); same rules as 0005:
-- dashboards read only these, times are "time", ratios are fractions.

CREATE VIEW grafana_slos AS
SELECT s.id AS slo_id, s.name AS slo, s.service, s.op, s.view, s.name_match,
       s.threshold_us / 1000.0 AS threshold_ms, s.objective, s.window_text AS slo_window, s.window_kind
  FROM slos s;

-- Exact good/total counts per SLO and minute (kept about 3 days: the longest burn window).
CREATE VIEW grafana_slo_minutes AS
SELECT m.minute AS time, m.slo_id, s.name AS slo, s.service, s.objective,
       m.good, m.total, m.total - m.good AS bad
  FROM slo_minutes m
  JOIN slos s ON s.id = m.slo_id;

-- Burn rates per SLO and minute over the windows of the multiwindow,
-- multi-burn-rate recipe: the bad fraction over the window divided by the
-- error budget (1 - objective). 1 = spending the budget exactly over the SLO
-- window; page at 14.4 (1h and 5m) or 6 (6h and 30m), ticket at 3 (1d and 2h)
-- or 1 (3d and 6h). Each window ends at the row's minute.
CREATE VIEW grafana_slo_burn_rates AS
SELECT b.time, b.slo_id, b.slo, b.service, b.objective, b.total, b.bad,
       b.bad_5m::float8  / NULLIF(b.total_5m, 0)  / (1 - b.objective) AS burn_5m,
       b.bad_30m::float8 / NULLIF(b.total_30m, 0) / (1 - b.objective) AS burn_30m,
       b.bad_1h::float8  / NULLIF(b.total_1h, 0)  / (1 - b.objective) AS burn_1h,
       b.bad_2h::float8  / NULLIF(b.total_2h, 0)  / (1 - b.objective) AS burn_2h,
       b.bad_6h::float8  / NULLIF(b.total_6h, 0)  / (1 - b.objective) AS burn_6h,
       b.bad_1d::float8  / NULLIF(b.total_1d, 0)  / (1 - b.objective) AS burn_1d,
       b.bad_3d::float8  / NULLIF(b.total_3d, 0)  / (1 - b.objective) AS burn_3d
  FROM (
    SELECT m.time, m.slo_id, m.slo, m.service, m.objective, m.total, m.bad,
           sum(m.bad) OVER w5m AS bad_5m,   sum(m.total) OVER w5m AS total_5m,
           sum(m.bad) OVER w30m AS bad_30m, sum(m.total) OVER w30m AS total_30m,
           sum(m.bad) OVER w1h AS bad_1h,   sum(m.total) OVER w1h AS total_1h,
           sum(m.bad) OVER w2h AS bad_2h,   sum(m.total) OVER w2h AS total_2h,
           sum(m.bad) OVER w6h AS bad_6h,   sum(m.total) OVER w6h AS total_6h,
           sum(m.bad) OVER w1d AS bad_1d,   sum(m.total) OVER w1d AS total_1d,
           sum(m.bad) OVER w3d AS bad_3d,   sum(m.total) OVER w3d AS total_3d
      FROM grafana_slo_minutes m
    WINDOW w5m AS (PARTITION BY m.slo_id ORDER BY m.time RANGE BETWEEN interval '4 minutes' PRECEDING AND CURRENT ROW),
           w30m AS (PARTITION BY m.slo_id ORDER BY m.time RANGE BETWEEN interval '29 minutes' PRECEDING AND CURRENT ROW),
           w1h AS (PARTITION BY m.slo_id ORDER BY m.time RANGE BETWEEN interval '59 minutes' PRECEDING AND CURRENT ROW),
           w2h AS (PARTITION BY m.slo_id ORDER BY m.time RANGE BETWEEN interval '119 minutes' PRECEDING AND CURRENT ROW),
           w6h AS (PARTITION BY m.slo_id ORDER BY m.time RANGE BETWEEN interval '359 minutes' PRECEDING AND CURRENT ROW),
           w1d AS (PARTITION BY m.slo_id ORDER BY m.time RANGE BETWEEN interval '1439 minutes' PRECEDING AND CURRENT ROW),
           w3d AS (PARTITION BY m.slo_id ORDER BY m.time RANGE BETWEEN interval '4319 minutes' PRECEDING AND CURRENT ROW)
  ) b;

-- Each SLO over its own window (rolling, or the current calendar day/week/month), from hourly counts.
CREATE VIEW grafana_slo_budget AS
SELECT s.id AS slo_id, s.name AS slo, s.service, s.objective, s.threshold_us / 1000.0 AS threshold_ms,
       s.window_text AS slo_window, w.start AS window_start, h.good, h.total,
       h.good::float8 / NULLIF(h.total, 0) AS sli,
       1 - ((h.total - h.good)::float8 / NULLIF(h.total, 0)) / (1 - s.objective) AS budget_remaining
  FROM slos s
  CROSS JOIN LATERAL (
    SELECT CASE WHEN s.window_kind = 'rolling' THEN now() - s.window_ms * interval '1 millisecond'
                ELSE date_trunc(coalesce(s.calendar_unit, 'month'), now() AT TIME ZONE s.time_zone) AT TIME ZONE s.time_zone
           END AS start
  ) w
  CROSS JOIN LATERAL (
    SELECT coalesce(sum(x.good), 0)::bigint AS good, coalesce(sum(x.total), 0)::bigint AS total
      FROM slo_hours x WHERE x.slo_id = s.id AND x.hour >= date_trunc('hour', w.start)
  ) h;

-- Alert episodes (SLO burns and regressions), newest first in tables.
CREATE VIEW grafana_alerts AS
SELECT a.id AS alert_id, a.started_at AS time, a.resolved_at, a.type, a.severity, a.status, a.title,
       a.service, a.op, a.view, a.series_name, a.slo_id, a.regression_id,
       a.burn_rate, a.burn_window, a.acknowledged_at, a.acknowledged_by
  FROM alerts a;

-- Alert episodes as region annotations: from firing to resolved (or now).
CREATE VIEW grafana_alert_annotations AS
SELECT a.id, a.started_at AS time, coalesce(a.resolved_at, now()) AS timeend,
       a.type, a.severity, a.status, a.service, a.slo_id,
       a.title || coalesce(format(' — burn %s× over %s', round(a.burn_rate::numeric, 1), a.burn_window), '')
               || CASE WHEN a.status = 'resolved' THEN ' (resolved)' ELSE ' (firing)' END AS text,
       concat_ws(',', 'alert', a.type, a.severity, a.status, a.service) AS tags
  FROM alerts a;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'onset_grafana') THEN
    GRANT SELECT ON grafana_slos, grafana_slo_minutes, grafana_slo_burn_rates, grafana_slo_budget,
                    grafana_alerts, grafana_alert_annotations TO onset_grafana;
  END IF;
END $$;

-- Down Migration
DROP VIEW grafana_alert_annotations;
DROP VIEW grafana_alerts;
DROP VIEW grafana_slo_budget;
DROP VIEW grafana_slo_burn_rates;
DROP VIEW grafana_slo_minutes;
DROP VIEW grafana_slos;
