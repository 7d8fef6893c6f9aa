/**
 * What is arriving: per service and per host, the series with calls in a
 * window, the calls, and the p50/p99 of the latest minute with calls. It is
 * what a newcomer's overview shows before anything has regressed, so one can
 * see that the agent's or the SDK's data is landing.
 *
 * Calls, hosts and levels are the service's own spans: pairing files an edge's
 * client, server and gap views under the caller with the callee's resource
 * (edges/pairing.ts), so rows whose resource is another service's are views of
 * calls counted already, on hosts that are not the caller's.
 */
import { Histogram } from '@onset/core';
import type { Arriving } from '@onset/contract';
import type { Pool } from '../db/pool.ts';

/** Longer windows count calls from the hourly rollups (plus the minutes not yet compacted). */
const HOURLY_FROM_MS = 2 * 86_400_000;

export async function arriving(pool: Pool, fromMs: number, toMs: number): Promise<Arriving> {
  const hourly = toMs - fromMs >= HOURLY_FROM_MS;
  const args = [new Date(fromMs), new Date(toMs)];
  const counts = hourly
    ? `SELECT series_id, resource_id, count, hour AS at FROM histograms_hourly WHERE hour >= $1 AND hour < $2
       UNION ALL SELECT series_id, resource_id, count, minute FROM histograms
        WHERE minute >= $1 AND minute < $2 AND NOT compacted`
    : `SELECT series_id, resource_id, count, minute AS at FROM histograms WHERE minute >= $1 AND minute < $2`;
  const { rows } = await pool.query<{
    service: string;
    host: string;
    series: string;
    calls: string;
    last_at: Date;
  }>(
    `SELECT s.service, r.host, count(DISTINCT c.series_id) AS series, sum(c.count) AS calls, max(c.at) AS last_at
       FROM (${counts}) c JOIN series s ON s.id = c.series_id JOIN resources r ON r.id = c.resource_id
      WHERE r.service = s.service
      GROUP BY s.service, r.host`,
    args,
  );
  // Distinct series per service (a series reported by several hosts counts once).
  const perService = await pool.query<{ service: string; series: string }>(
    `SELECT s.service, count(DISTINCT c.series_id) AS series FROM (${counts}) c JOIN series s ON s.id = c.series_id
      GROUP BY s.service`,
    args,
  );
  // The latest minute with calls of each service (within the window's last hour), merged
  // over its own series and hosts.
  const last = await pool.query<{ service: string; at: Date; idx: number[]; cnt: number[] }>(
    `WITH latest AS (
       SELECT s.service, max(h.minute) AS at FROM histograms h JOIN series s ON s.id = h.series_id
         JOIN resources r ON r.id = h.resource_id AND r.service = s.service
        WHERE h.minute >= greatest($1::timestamptz, $2::timestamptz - interval '1 hour') AND h.minute < $2
        GROUP BY s.service)
     SELECT l.service, l.at, h.idx, h.cnt FROM latest l
       JOIN series s ON s.service = l.service
       JOIN histograms h ON h.series_id = s.id AND h.minute = l.at
       JOIN resources r ON r.id = h.resource_id AND r.service = s.service`,
    args,
  );
  const lastMinute = new Map<string, { at: Date; h: Histogram }>();
  for (const r of last.rows) {
    let e = lastMinute.get(r.service);
    if (!e) lastMinute.set(r.service, (e = { at: r.at, h: new Histogram() }));
    e.h.addSparse(r);
  }
  const ms = (us: number) => Number((us / 1000).toPrecision(4));

  const services = new Map<string, { hosts: Set<string>; calls: number }>();
  const hosts = new Map<
    string,
    { services: Set<string>; series: number; calls: number; last: number }
  >();
  for (const r of rows) {
    const svc = services.get(r.service) ?? { hosts: new Set<string>(), calls: 0 };
    services.set(r.service, svc);
    svc.calls += Number(r.calls);
    if (!r.host) continue;
    svc.hosts.add(r.host);
    const h = hosts.get(r.host) ?? { services: new Set<string>(), series: 0, calls: 0, last: 0 };
    hosts.set(r.host, h);
    h.services.add(r.service);
    h.series += Number(r.series);
    h.calls += Number(r.calls);
    h.last = Math.max(h.last, r.last_at.getTime());
  }
  const seriesOf = new Map(perService.rows.map((r) => [r.service, Number(r.series)]));
  return {
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    services: [...services.entries()]
      .map(([service, v]) => {
        const lm = lastMinute.get(service);
        return {
          service,
          series: seriesOf.get(service) ?? 0,
          hosts: [...v.hosts].sort(),
          calls: v.calls,
          last_minute:
            lm && lm.h.count > 0
              ? {
                  at: lm.at.toISOString(),
                  count: lm.h.count,
                  p50_ms: ms(lm.h.quantile(0.5)),
                  p99_ms: ms(lm.h.quantile(0.99)),
                }
              : null,
        };
      })
      .sort((a, b) => b.calls - a.calls || a.service.localeCompare(b.service)),
    hosts: [...hosts.entries()]
      .map(([host, v]) => ({
        host,
        services: [...v.services].sort(),
        series: v.series,
        calls: v.calls,
        last_seen: new Date(v.last).toISOString(),
      }))
      .sort((a, b) => a.host.localeCompare(b.host)),
    totals: {
      services: services.size,
      hosts: hosts.size,
      series: [...seriesOf.values()].reduce((a, b) => a + b, 0),
    },
  };
}
