/**
 * GET /api/v1/traces/{trace_id}: the stored spans of one trace (every span Onset received keeps
 * its row in `observations` for ONSET_RAW_RETENTION; exemplars also keep their attributes).
 * One statement on `observations` by trace id, joined with the registries only: on Citus the
 * spans are distributed by trace id and the registries are reference tables, so it is routed
 * to the one shard that holds the trace.
 */
import type { Trace, TraceSpan } from '@onset/contract';
import type { Queryable } from '../db/pool.ts';
import { traceUrl } from './evidence.ts';

/** Spans returned at most (a trace with more says `truncated`). */
export const TRACE_MAX_SPANS = 2000;

const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;

interface Row {
  span_id: string;
  parent_span_id: string | null;
  kind: number;
  start: Date;
  duration_us: number;
  attrs: Record<string, unknown> | null;
  series_id: string;
  op: string;
  view: string;
  name: string;
  service: string;
  host: string;
  res_attrs: Record<string, unknown> | null;
}

type Scalar = string | number | boolean;
const scalars = (o: Record<string, unknown> | null): Record<string, Scalar> => {
  const out: Record<string, Scalar> = {};
  for (const [k, v] of Object.entries(o ?? {}))
    if (
      typeof v === 'string' ||
      typeof v === 'boolean' ||
      (typeof v === 'number' && Number.isFinite(v))
    )
      out[k] = v;
  return out;
};

/** The trace's stored spans, parents before their children, or null when none is stored. */
export async function readTrace(
  db: Queryable,
  traceId: string,
  traceUrlTemplate?: string,
): Promise<Trace | null> {
  const { rows } = await db.query<Row>(
    `SELECT encode(o.span_id, 'hex') AS span_id, encode(o.parent_span_id, 'hex') AS parent_span_id,
            o.kind, o.start_time AS start, o.duration_us, o.attrs, o.series_id::text AS series_id,
            s.op, s.view, s.name, r.service, r.host, r.attrs AS res_attrs
       FROM observations o
       JOIN series s ON s.id = o.series_id
       JOIN resources r ON r.id = o.resource_id
      WHERE o.trace_id = decode($1, 'hex')
      ORDER BY o.start_time, o.span_id
      LIMIT $2`,
    [traceId, TRACE_MAX_SPANS + 1],
  );
  if (!rows.length) return null;
  const truncated = rows.length > TRACE_MAX_SPANS;
  // A span retried across midnight is stored once per received day: keep one.
  const byId = new Map<string, Row>();
  for (const r of rows.slice(0, TRACE_MAX_SPANS)) if (!byId.has(r.span_id)) byId.set(r.span_id, r);
  const spans = [...byId.values()];
  const children = new Map<string, Row[]>();
  const roots: Row[] = [];
  for (const r of spans) {
    const p = r.parent_span_id;
    if (p && p !== r.span_id && byId.has(p)) {
      let list = children.get(p);
      if (!list) children.set(p, (list = []));
      list.push(r);
    } else roots.push(r);
  }
  const firstMs = Math.min(...spans.map((r) => r.start.getTime()));
  const lastEndMs = Math.max(...spans.map((r) => r.start.getTime() + r.duration_us / 1000));
  const out: TraceSpan[] = [];
  const seen = new Set<string>();
  const visit = (r: Row, depth: number) => {
    if (seen.has(r.span_id)) return;
    seen.add(r.span_id);
    out.push({
      span_id: r.span_id,
      parent_span_id: r.parent_span_id,
      service: r.service,
      host: r.host,
      name: r.name,
      op: r.op,
      view: r.view,
      series_id: r.series_id,
      kind: KINDS[r.kind] ?? 'unspecified',
      start: r.start.toISOString(),
      offset_ms: r.start.getTime() - firstMs,
      duration_ms: r.duration_us / 1000,
      depth,
      attributes: r.attrs === null ? null : scalars(r.attrs),
      resource_attributes: scalars(r.res_attrs),
    });
    for (const c of children.get(r.span_id) ?? []) visit(c, depth + 1);
  };
  for (const r of roots) visit(r, 0);
  // A parent cycle (malformed ids) leaves spans no root reaches: list them as roots.
  for (const r of spans) visit(r, 0);
  const trace: Trace = {
    trace_id: traceId,
    start: new Date(firstMs).toISOString(),
    duration_ms: lastEndMs - firstMs,
    services: [...new Set(out.map((s) => s.service))].sort(),
    spans: out,
    truncated,
  };
  if (traceUrlTemplate)
    trace.trace_url = traceUrl(traceUrlTemplate, {
      trace_id: traceId,
      span_id: out[0]!.span_id,
      start: new Date(firstMs),
    });
  return trace;
}
