import { resourceKey, seriesKey, type Registry } from './registry.ts';
import { admitObservations } from '../cardinality/admit.ts';
import { utcDay, type Partitions } from '../db/partitions.ts';
import type { Pool } from '../db/pool.ts';
import type { Observation } from './normalize-traces.ts';

export interface StoreResult {
  inserted: number;
  duplicates: number;
  /** Spans dropped because their series would be new beyond a cardinality limit. */
  dropped: number;
}

/**
 * Store a request's observations in ONE statement (so one transaction):
 * raw rows into `observations`, skipping spans already stored (OTLP retries),
 * and exactly the newly stored ones folded into per-minute histograms.
 * Returns only after PostgreSQL has committed.
 */
export async function storeObservations(
  pool: Pool,
  registry: Registry,
  partitions: Partitions,
  obs: Observation[],
  now = Date.now(),
): Promise<StoreResult> {
  if (!obs.length) return { inserted: 0, duplicates: 0, dropped: 0 };
  const admitted = await admitObservations(registry, obs);
  const { seriesIds, resourceIds, dropped } = admitted;
  obs = admitted.kept;
  if (!obs.length) return { inserted: 0, duplicates: 0, dropped };

  const n = obs.length;
  const traceIds = new Array<Buffer>(n);
  const spanIds = new Array<Buffer>(n);
  const parents = new Array<Buffer | null>(n);
  const sIds = new Array<number>(n);
  const rIds = new Array<number>(n);
  const starts = new Array<number>(n);
  const durations = new Array<number>(n);
  const kinds = new Array<number>(n);
  const attrs = new Array<string | null>(n);
  const links = new Map<string, [number, number]>();
  const minuteDays = new Set<string>();
  for (let i = 0; i < n; i++) {
    const o = obs[i]!;
    traceIds[i] = o.traceId;
    spanIds[i] = o.spanId;
    parents[i] = o.parentSpanId;
    sIds[i] = seriesIds.get(seriesKey(o.series))!;
    rIds[i] = resourceIds.get(resourceKey(o.resource))!;
    starts[i] = o.startMs;
    durations[i] = o.durationUs;
    kinds[i] = o.kind;
    attrs[i] = o.attrs;
    links.set(`${sIds[i]}:${rIds[i]}`, [sIds[i]!, rIds[i]!]);
    minuteDays.add(utcDay(o.startMs));
  }
  const today = utcDay(now);
  await partitions.ensure('observations', [today]);
  await partitions.ensure('histograms', minuteDays);
  await registry.link([...links.values()]);

  const res = await pool.query<{ count: number }>(
    `WITH input AS (
       SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::bigint[], $5::bigint[],
                            $6::float8[], $7::float8[], $8::int2[], $10::text[])
         AS u(trace_id, span_id, parent_span_id, series_id, resource_id, start_ms, duration_us, kind, attrs)
     ), ins AS (
       INSERT INTO observations (received_day, trace_id, span_id, parent_span_id, series_id, resource_id,
                                 start_time, duration_us, kind, attrs)
       SELECT $9::date, i.trace_id, i.span_id, i.parent_span_id, i.series_id, i.resource_id,
              to_timestamp(i.start_ms / 1000.0), i.duration_us, i.kind, i.attrs::jsonb
         FROM input i
        WHERE NOT EXISTS (SELECT 1 FROM observations o
                           WHERE o.received_day = $9::date - 1 AND o.trace_id = i.trace_id AND o.span_id = i.span_id)
       ON CONFLICT DO NOTHING
       RETURNING series_id, resource_id, start_time, duration_us
     ), b AS (
       SELECT series_id, resource_id, date_trunc('minute', start_time) AS minute, onset_bucket(duration_us) AS i,
              count(*)::int AS c, sum(duration_us) AS s, min(duration_us) AS mn, max(duration_us) AS mx
         FROM ins GROUP BY 1, 2, 3, 4
     )
     INSERT INTO histograms (series_id, resource_id, minute, count, sum_us, min_us, max_us, idx, cnt)
     SELECT series_id, resource_id, minute, sum(c), sum(s), min(mn), max(mx),
            array_agg(i ORDER BY i), array_agg(c ORDER BY i)
       FROM b GROUP BY 1, 2, 3
     RETURNING count`,
    [traceIds, spanIds, parents, sIds, rIds, starts, durations, kinds, today, attrs],
  );
  const inserted = res.rows.reduce((a, r) => a + Number(r.count), 0);
  return { inserted, duplicates: n - inserted, dropped };
}
