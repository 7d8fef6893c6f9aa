import {
  edgeClientLabels,
  foldDecisions,
  Histogram,
  isEdgeClientView,
  type FoldCall,
  type SeriesLabels,
} from '@onset/core';
import type { View } from '@onset/contract';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import { utcDay, type Partitions } from '../db/partitions.ts';
import { seriesKey, type Registry } from '../otlp/registry.ts';
import { insertMinuteHistograms } from '../otlp/histograms.ts';
import { detectBudget } from '../config.ts';

/**
 * Edge pairing (api.md "call on an edge"): a CLIENT/PRODUCER span and the
 * SERVER/CONSUMER span whose parent it is (same trace, server.parent = client.span)
 * are one call on the edge (caller service -> callee service, callee's name).
 * Each pass pairs the calls whose later half arrived since the last pass and
 * folds them into three per-minute series per edge:
 *   client — the caller's duration,  server — the callee's duration,
 *   gap    — client minus server: where the kernel and the network hide.
 * Pair first, then classify: a caller series whose calls pair with one edge is
 * folded into that edge's client view (core edge-fold.ts, registry.foldSeries),
 * so the caller's spans are named after the edge from then on and the caller
 * keeps its own series only for calls that never pair.
 * Halves that arrive more than `windowMs` apart are not paired (bounded work);
 * state is a cursor in PostgreSQL, so a restart resumes where it stopped.
 *
 * Memory is bounded whatever the backlog: a slice of arrivals (`sliceMs`) is
 * one transaction, and its calls are read through a PostgreSQL cursor
 * `batchRows` at a time (ONSET_PAIR_BATCH, default 5000, budget.ts), each
 * batch folded and written before the next is fetched (a minute of an edge
 * may then have several histogram rows, as ingest leaves them; readers and
 * compaction merge them). Progress (calls paired, arrival cursor) is kept for
 * the scheduler's log (pairingProgressOf).
 */
export interface PairingOptions {
  windowMs?: number;
  /** Process arrivals up to this time (default now - 5 s, so ingest statements still in flight are not skipped). */
  uptoMs?: number;
  /** Arrivals handled per transaction. */
  sliceMs?: number;
  /** Calls read, folded and written at a time (default ONSET_PAIR_BATCH). */
  batchRows?: number;
}

export interface PairingProgress {
  started_at: string;
  pairs: number;
  /** Arrivals before this instant are paired. */
  cursor: string;
  /** The pass pairs arrivals up to this instant. */
  upto: string;
}

const running = new WeakMap<Pool, PairingProgress>();

/** The pairing pass running in this process on this pool, if any. */
export function pairingProgressOf(pool: Pool): PairingProgress | null {
  const p = running.get(pool);
  return p ? { ...p } : null;
}

export interface PairingResult {
  pairs: number;
  edges: number;
  cursor: string;
  /** Caller series folded into an edge's client view by this pass. */
  folded: number;
}

interface PairRow {
  client_service: string;
  server_service: string;
  server_op: string;
  server_name: string;
  client_series: string;
  client_op: string;
  client_folded: number | null;
  client_view: string;
  client_name: string;
  client_peer: string;
  server_resource: number;
  client_resource: number;
  minute_ms: number;
  client_us: number;
  server_us: number;
}

const DEFAULT_WINDOW_MS = 5 * 60_000;
/** By default a pass pairs arrivals up to this long ago (ingest statements still in flight are not skipped). */
export const PAIRING_LAG_MS = 5000;

export async function pairEdges(
  pool: Pool,
  registry: Registry,
  partitions: Partitions,
  opts: PairingOptions = {},
): Promise<PairingResult> {
  // Whole milliseconds: the cursor round-trips through Date, and a fractional bound would never be reached.
  const uptoMs = Math.floor(opts.uptoMs ?? Date.now() - PAIRING_LAG_MS);
  const sliceMs = opts.sliceMs ?? 10_000;
  // Start from the first arrival ever, not from 1970.
  await pool.query(
    `INSERT INTO pairing_state (cursor_at)
     SELECT COALESCE((SELECT min(received_at) FROM observations) - interval '1 millisecond', to_timestamp($1 / 1000.0))
     ON CONFLICT DO NOTHING`,
    [uptoMs],
  );
  const batchRows = opts.batchRows ?? detectBudget().pairBatch;
  let pairs = 0;
  const edges = new Set<string>();
  // This pass's fold decisions (client series -> edge client series, 0 refused): a slice's
  // cursor reads folds as they were when it was declared.
  const folds = new Map<number, number>();
  let cursor = '';
  const progress: PairingProgress = {
    started_at: new Date().toISOString(),
    pairs: 0,
    cursor: '',
    upto: new Date(uptoMs).toISOString(),
  };
  running.set(pool, progress);
  try {
    for (;;) {
      const r = await pairSlice(
        pool,
        registry,
        partitions,
        { windowMs: opts.windowMs ?? DEFAULT_WINDOW_MS, uptoMs, sliceMs, batchRows },
        edges,
        folds,
      );
      pairs += r.pairs;
      cursor = r.cursor;
      progress.pairs = pairs;
      progress.cursor = cursor;
      if (r.done) break;
    }
  } finally {
    if (running.get(pool) === progress) running.delete(pool);
  }
  let folded = 0;
  for (const to of folds.values()) if (to > 0) folded++;
  return { pairs, edges: edges.size, cursor, folded };
}

async function pairSlice(
  pool: Pool,
  registry: Registry,
  partitions: Partitions,
  o: { windowMs: number; uptoMs: number; sliceMs: number; batchRows: number },
  edges: Set<string>,
  folds: Map<number, number>,
): Promise<{ pairs: number; cursor: string; done: boolean }> {
  const { windowMs, uptoMs, sliceMs, batchRows } = o;
  return withTransaction(pool, async (c) => {
    // One pass at a time across all servers: the state row is the lock.
    const { rows: st } = await c.query<{ cursor_at: Date }>(
      `SELECT cursor_at FROM pairing_state FOR UPDATE`,
    );
    const cursor = st[0]!.cursor_at;
    if (cursor.getTime() >= uptoMs) return { pairs: 0, cursor: cursor.toISOString(), done: true };
    const upto = new Date(Math.min(uptoMs, cursor.getTime() + sliceMs));
    const fromDay = utcDay(Math.max(0, cursor.getTime() - windowMs));
    // A call is paired by the pass in which its later half arrived.
    await c.query(
      `DECLARE pair_calls NO SCROLL CURSOR FOR
       WITH calls AS (
         SELECT c.series_id AS c_series, s.series_id AS s_series, s.resource_id AS s_resource,
                c.resource_id AS c_resource, c.start_time, c.duration_us AS client_us, s.duration_us AS server_us
           FROM observations s
           JOIN observations c ON c.trace_id = s.trace_id AND c.span_id = s.parent_span_id
          WHERE s.kind IN (2, 5) AND c.kind IN (3, 4)
            AND s.received_day >= $3::date AND c.received_day >= $3::date
            AND s.received_at > $1 AND s.received_at <= $2 AND c.received_at <= s.received_at
            AND c.received_at >= s.received_at - make_interval(secs => $4 / 1000.0)
         UNION ALL
         SELECT c.series_id, s.series_id, s.resource_id, c.resource_id, c.start_time, c.duration_us, s.duration_us
           FROM observations c
           JOIN observations s ON s.trace_id = c.trace_id AND s.parent_span_id = c.span_id
          WHERE s.kind IN (2, 5) AND c.kind IN (3, 4)
            AND s.received_day >= $3::date AND c.received_day >= $3::date
            AND c.received_at > $1 AND c.received_at <= $2 AND s.received_at < c.received_at
            AND s.received_at >= c.received_at - make_interval(secs => $4 / 1000.0)
       )
       SELECT cs.service AS client_service, ss.service AS server_service, ss.op AS server_op, ss.name AS server_name,
              cs.id::text AS client_series, cs.op AS client_op, cs.folded_into AS client_folded, cs.view AS client_view, cs.name AS client_name, cs.peer AS client_peer,
              k.s_resource AS server_resource, k.c_resource AS client_resource,
              (floor(extract(epoch FROM k.start_time) / 60) * 60000)::float8 AS minute_ms,
              k.client_us, k.server_us
         FROM calls k JOIN series cs ON cs.id = k.c_series JOIN series ss ON ss.id = k.s_series`,
      [cursor, upto, fromDay, windowMs],
    );
    let total = 0;
    for (;;) {
      const { rows } = await c.query<PairRow>(`FETCH ${batchRows} FROM pair_calls`);
      if (!rows.length) break;
      total += rows.length;
      await foldAndWrite(c, registry, partitions, rows, edges, folds);
      if (rows.length < batchRows) break;
    }
    await c.query('CLOSE pair_calls');
    let next = upto;
    if (!total) {
      // Nothing here: skip straight to the next arrival instead of walking empty slices.
      const { rows: n } = await c.query<{ at: Date | null }>(
        `SELECT min(received_at) AS at FROM observations WHERE received_at > $1`,
        [upto],
      );
      const at = n[0]?.at?.getTime();
      next = new Date(
        at === undefined ? uptoMs : Math.max(upto.getTime(), Math.min(uptoMs, at - 1)),
      );
    }
    await c.query(
      `UPDATE pairing_state SET cursor_at = $1, pairs_total = pairs_total + $2, updated_at = now()`,
      [next, total],
    );
    return { pairs: total, cursor: next.toISOString(), done: next.getTime() >= uptoMs };
  });
}

/** Fold one batch of calls into per-minute histograms per edge view and write them. */
async function foldAndWrite(
  c: PoolClient,
  registry: Registry,
  partitions: Partitions,
  rows: PairRow[],
  edges: Set<string>,
  folds: Map<number, number>,
): Promise<void> {
  // Fold calls into per-minute histograms per edge view.
  const groups = new Map<
    string,
    { labels: SeriesLabels; resource: number; minute: number; h: Histogram }
  >();
  // The caller's hosts feed the client and gap views too: their series list them (series/columns.ts)
  // and a marker for a caller's host attributes them. Their histograms stay on the callee's resource.
  const callerLinks = new Map<string, { labels: SeriesLabels; resource: number }>();
  const linkCaller = (labels: SeriesLabels, resource: number) =>
    callerLinks.set(`${seriesKey(labels)}\u0001${resource}`, { labels, resource });
  const add = (labels: SeriesLabels, resource: number, minute: number, us: number) => {
    const k = `${seriesKey(labels)}\u0001${resource}\u0001${minute}`;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { labels, resource, minute, h: new Histogram() }));
    g.h.record(us);
  };
  // Each call's edge client view, for folding (an own call's is its client series).
  const calls: Array<{ client: number; folded: number | null; edge: SeriesLabels | null }> = [];
  for (const r of rows) {
    const op = r.server_op as SeriesLabels['op'];
    const client = edgeClientLabels(r.client_service, op, r.server_name, r.server_service);
    const view = (v: View): SeriesLabels => ({ ...client, view: v });
    edges.add(seriesKey(view('gap')));
    const minute = Number(r.minute_ms);
    add(view('gap'), r.server_resource, minute, r.client_us - r.server_us);
    linkCaller(view('gap'), r.client_resource);
    add(view('server'), r.server_resource, minute, r.server_us);
    // The caller's own span series may already carry exactly these labels; never count it twice.
    const own = isEdgeClientView(
      { view: r.client_view as SeriesLabels['view'], name: r.client_name, peer: r.client_peer },
      client,
    );
    if (!own) {
      add(client, r.server_resource, minute, r.client_us);
      linkCaller(client, r.client_resource);
    }
    calls.push({
      client: Number(r.client_series),
      folded: r.client_folded,
      edge: own ? null : client,
    });
  }
  if (groups.size) {
    const all = [...groups.values()];
    const ids = await registry.seriesIds(all.map((g) => g.labels));
    const foldCalls: FoldCall[] = [];
    for (const k of calls) {
      const edge = k.edge ? ids.get(seriesKey(k.edge)) : k.client;
      if (edge !== undefined)
        foldCalls.push({ client: k.client, foldedInto: k.folded, own: !k.edge, edge });
    }
    const done = await registry.foldSeries(c, foldDecisions(foldCalls, folds));
    for (const [id, to] of done.folded) folds.set(id, to);
    for (const id of done.refused) folds.set(id, 0);
    // An edge series the cardinality guard refuses (limits reached) is not created; the guard counts the drop.
    const list = all.filter((g) => ids.has(seriesKey(g.labels)));
    if (!list.length) return;
    const links = new Map<string, [number, number]>();
    for (const g of [...list, ...callerLinks.values()]) {
      const sid = ids.get(seriesKey(g.labels));
      if (sid !== undefined) links.set(`${sid}:${g.resource}`, [sid, g.resource]);
    }
    await registry.link([...links.values()]);
    await partitions.ensure('histograms', new Set(list.map((g) => utcDay(g.minute))));
    await insertMinuteHistograms(
      c,
      list.map((g) => ({
        seriesId: ids.get(seriesKey(g.labels))!,
        resourceId: g.resource,
        minuteMs: g.minute,
        h: g.h,
      })),
    );
  }
}

/** Arrivals before this instant (epoch ms) are paired and committed; null before the first pairing. */
export async function pairingCursorMs(db: Pool | PoolClient): Promise<number | null> {
  const { rows } = await db.query<{ ms: number }>(
    `SELECT (extract(epoch FROM cursor_at) * 1000)::float8 AS ms FROM pairing_state`,
  );
  return rows[0] ? Number(rows[0].ms) : null;
}
