import type { Queryable } from '../db/pool.ts';

/** One raw call read for evidence: the span (and, on an edge, its paired half) with resource facts. */
export interface CallRow {
  trace_id: string;
  span_id: string;
  start: Date;
  /** What the regression's view measures, µs (gap: client minus server). */
  measure_us: number;
  duration_us: number;
  host: string;
  service: string;
  attrs: Record<string, unknown> | null;
  res_attrs: Record<string, unknown> | null;
  paired_span_id: string | null;
  paired_duration_us: number | null;
  paired_host: string | null;
  paired_service: string | null;
  /** The other side's resource attributes on an edge call. */
  paired_res_attrs: Record<string, unknown> | null;
  /** The callee's own duration on an edge call, µs. */
  callee_us: number | null;
}

export interface Window {
  fromMs: number;
  toMs: number;
  /** Read the calls nearest the onset: the latest of a before window, the earliest of an after window. */
  newestFirst: boolean;
  limit: number;
}

/**
 * Exemplar spans (the ones stored with their attributes, otlp/exemplars.ts) of a
 * series that has its own spans (server, internal, or the caller's own client series).
 */
export async function ownCalls(db: Queryable, seriesId: string, w: Window): Promise<CallRow[]> {
  const { rows } = await db.query<CallRow>(
    `SELECT encode(o.trace_id, 'hex') AS trace_id, encode(o.span_id, 'hex') AS span_id, o.start_time AS start,
            o.duration_us AS measure_us, o.duration_us, r.host, r.service, o.attrs, r.attrs AS res_attrs,
            NULL::text AS paired_span_id, NULL::float8 AS paired_duration_us, NULL::text AS paired_host,
            NULL::text AS paired_service, NULL::jsonb AS paired_res_attrs, NULL::float8 AS callee_us
       FROM observations o JOIN resources r ON r.id = o.resource_id
      WHERE o.series_id = $1::bigint AND o.exemplar
        AND o.start_time >= to_timestamp($2 / 1000.0) AND o.start_time < to_timestamp($3 / 1000.0)
      ORDER BY o.start_time ${w.newestFirst ? 'DESC' : 'ASC'} LIMIT $4`,
    [seriesId, w.fromMs, w.toMs, w.limit],
  );
  return rows;
}

export interface EdgeLabels {
  /** The caller service. */
  service: string;
  /** The callee service. */
  peer: string;
  op: string;
  /** The callee's operation name. */
  name: string;
  view: 'client' | 'server' | 'gap';
}

/**
 * Calls on an edge, paired as edge pairing pairs them (client span, and the
 * server span whose parent it is). The server view reports the callee's span
 * with the client as its pair; client and gap report the caller's span. The
 * reported span is an exemplar (stored with its attributes, otlp/exemplars.ts);
 * its pair is whichever span completes the call.
 */
export async function edgeCalls(db: Queryable, e: EdgeLabels, w: Window): Promise<CallRow[]> {
  const server = e.view === 'server';
  const measure =
    e.view === 'gap' ? 'c.duration_us - s.duration_us' : server ? 's.duration_us' : 'c.duration_us';
  const [main, other, mainRes, otherRes] = server ? ['s', 'c', 'rs', 'rc'] : ['c', 's', 'rc', 'rs'];
  const callers = `SELECT id FROM series WHERE service = $1`;
  const callees = `SELECT id FROM series WHERE service = $2 AND op = $3 AND name = $4`;
  const { rows } = await db.query<CallRow>(
    `SELECT encode(${main}.trace_id, 'hex') AS trace_id, encode(${main}.span_id, 'hex') AS span_id,
            ${main}.start_time AS start, (${measure})::float8 AS measure_us, ${main}.duration_us,
            ${mainRes}.host, ${mainRes}.service, ${main}.attrs, ${mainRes}.attrs AS res_attrs,
            encode(${other}.span_id, 'hex') AS paired_span_id, ${other}.duration_us AS paired_duration_us,
            ${otherRes}.host AS paired_host, ${otherRes}.service AS paired_service, ${otherRes}.attrs AS paired_res_attrs,
            s.duration_us AS callee_us
       FROM observations ${main}
       JOIN observations ${other} ON ${
         server
           ? 'c.trace_id = s.trace_id AND c.span_id = s.parent_span_id'
           : 's.trace_id = c.trace_id AND s.parent_span_id = c.span_id'
       }
       JOIN resources rc ON rc.id = c.resource_id
       JOIN resources rs ON rs.id = s.resource_id
      WHERE ${main}.exemplar AND s.kind IN (2, 5) AND c.kind IN (3, 4)
        AND c.series_id IN (${callers}) AND s.series_id IN (${callees})
        AND ${main}.start_time >= to_timestamp($5 / 1000.0) AND ${main}.start_time < to_timestamp($6 / 1000.0)
      ORDER BY ${main}.start_time ${w.newestFirst ? 'DESC' : 'ASC'} LIMIT $7`,
    [e.service, e.peer, e.op, e.name, w.fromMs, w.toMs, w.limit],
  );
  return rows;
}
