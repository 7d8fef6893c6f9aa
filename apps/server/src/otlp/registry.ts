import type { FoldDecisions, ResourceLabels, SeriesLabels } from '@onset/core';
import type { Pool, PoolClient } from '../db/pool.ts';
import { textDigest } from '../text/sanitize.ts';
import type { CardinalityGuard, LimitReason } from '../cardinality/guard.ts';

const REFRESH_MS = 60_000;

/**
 * A series folded into an edge's client view (edge pairing, core edge-fold.ts) answers the edge
 * series' id for its labels: its spans land there. Other servers' caches learn it within REFRESH_MS.
 */
const followedId = (t = '') =>
  `CASE WHEN ${t}folded_into > 0 THEN ${t}folded_into ELSE ${t}id END AS id`;

// Keys are remembered per labels object: one request's spans share their resource's object and a
// span's series labels are keyed twice (admission, then store), so each key is built once. The
// resource key hashes its attributes (sha256), which was 4.5% of ingest CPU when built per span.
const seriesKeys = new WeakMap<SeriesLabels, string>();
const resourceKeys = new WeakMap<ResourceLabels, string>();

/** The series' identity as a string (labels objects are treated as immutable once keyed). */
export function seriesKey(s: SeriesLabels): string {
  let k = seriesKeys.get(s);
  if (k === undefined) {
    k = seriesKeyText(s);
    seriesKeys.set(s, k);
  }
  return k;
}
/**
 * The same key, not remembered: for labels objects made per span (decode groups spans by it),
 * where a WeakMap entry per span cost more than the string (4.9% of ingest CPU).
 */
export function seriesKeyText(s: SeriesLabels): string {
  return `${s.service}\u0000${s.op}\u0000${s.view}\u0000${s.name}\u0000${s.peer}`;
}
/** The resource's identity as a string (labels objects are treated as immutable once keyed). */
export function resourceKey(r: ResourceLabels): string {
  let k = resourceKeys.get(r);
  if (k === undefined) {
    k = `${r.service}\u0000${r.host}\u0000${attrsKey(r.attrs)}`;
    resourceKeys.set(r, k);
  }
  return k;
}
/** The cohort attributes' digest: a fixed-size unique key however many attributes there are (0015). */
function attrsKey(attrs: Record<string, string>): string {
  return textDigest(
    JSON.stringify(
      Object.keys(attrs)
        .sort()
        .map((k) => [k, attrs[k]]),
    ),
  );
}

/**
 * `series.folded_into` of a whole-view metric series (a metric naming no route, Python's
 * `http.client.duration`) whose calls its service's spans count (otlp/compact.ts): left out of
 * lists, search and options like a folded series, it answers its own id (nothing follows it), and
 * is shown again when its metrics count calls of their own (store-metrics.ts).
 */
export const COVERED_BY_SPANS = -1;

/**
 * SQL: the series is listed and detected, i.e. not folded into an edge's client view (its spans,
 * and its calls, are that series') nor a whole-view metric series its service's spans cover
 * (COVERED_BY_SPANS). `t` is the series table's alias.
 */
export const shownSeries = (t = 's') => `COALESCE(${t}.folded_into, 0) = 0`;

/** Series ids for a batch; series refused by the cardinality guard are absent from `ids`. */
export interface SeriesAdmission {
  ids: Map<string, number>;
  /** seriesKey -> the limit that refused it. */
  refused: Map<string, LimitReason>;
}

/** Resource ids for a batch; a refused resource maps to its service's overflow resource. */
export interface ResourceAdmission {
  ids: Map<string, number>;
  /** resourceKey -> the limit that folded it into the overflow resource. */
  folded: Map<string, LimitReason>;
}

/** Where spans of a service go once its resources are at a limit (outside the limit, one per service). */
export function overflowResource(service: string): ResourceLabels {
  return { service, host: '', attrs: { 'onset.overflow': 'true' } };
}

/** Refused keys remembered so repeated spans of a refused series do not ask the database again. */
const MAX_REFUSED_CACHED = 10_000;

/**
 * Ids for series and resources, cached in memory. Registry rows are upserted
 * in their own short statements (never inside an ingest transaction) so
 * concurrent requests for the same series do not queue on a row lock.
 * With a cardinality guard, a key never seen before takes a slot of its
 * service's budget before it is written (see cardinality/).
 */
export class Registry {
  private readonly series = new Map<string, { id: number; at: number }>();
  private readonly resources = new Map<string, { id: number; at: number }>();
  private readonly links = new Map<string, number>();
  private readonly refusedSeries = new Map<string, { reason: LimitReason; at: number }>();
  private readonly refusedResources = new Map<string, { reason: LimitReason; at: number }>();
  constructor(
    private readonly pool: Pool,
    readonly guard?: CardinalityGuard,
  ) {}

  async seriesIds(labels: SeriesLabels[], now = Date.now()): Promise<Map<string, number>> {
    return (await this.admitSeries(labels, now)).ids;
  }

  async admitSeries(labels: SeriesLabels[], now = Date.now()): Promise<SeriesAdmission> {
    this.guard?.maybeReload(now);
    const ids = new Map<string, number>();
    const refused = new Map<string, LimitReason>();
    const known = new Map<string, SeriesLabels>();
    const reserved = new Map<string, SeriesLabels>();
    const unsure = new Map<string, SeriesLabels>();
    for (const l of labels) {
      const k = seriesKey(l);
      if (ids.has(k) || known.has(k) || reserved.has(k) || unsure.has(k) || refused.has(k))
        continue;
      const hit = this.series.get(k);
      if (hit && now - hit.at < REFRESH_MS) ids.set(k, hit.id);
      else if (hit || !this.guard) known.set(k, l);
      else {
        const no = this.refusedSeries.get(k);
        if (no && now - no.at < REFRESH_MS) {
          refused.set(k, no.reason);
          continue;
        }
        const reason = this.guard.series.tryReserve(l.service);
        if (reason === null) reserved.set(k, l);
        else unsure.set(k, l);
      }
    }
    if (known.size || reserved.size) await this.upsertReservedSeries(reserved, ids, now, known);
    if (unsure.size) {
      // Over a limit, but the series may exist already (written before a restart or by another process).
      await this.findSeries([...unsure.values()], ids, now);
      const late = new Map<string, SeriesLabels>();
      for (const [k, l] of unsure) {
        if (ids.has(k)) continue;
        const reason = this.guard!.series.tryReserve(l.service);
        if (reason === null)
          late.set(k, l); // room opened while we looked
        else {
          refused.set(k, reason);
          remember(this.refusedSeries, k, reason, now);
        }
      }
      if (late.size) await this.upsertReservedSeries(late, ids, now);
    }
    return { ids, refused };
  }

  /** Upsert `known` and `reserved` series; each reservation is settled whatever happens. */
  private async upsertReservedSeries(
    reserved: Map<string, SeriesLabels>,
    ids: Map<string, number>,
    now: number,
    known = new Map<string, SeriesLabels>(),
  ): Promise<void> {
    let done: Written = { created: new Set(), xid: null };
    try {
      done = await this.upsertSeries([...known.values(), ...reserved.values()], ids, now);
    } finally {
      for (const [k, l] of reserved)
        this.guard!.series.settle(l.service, done.created.has(k), done.xid);
    }
  }

  /** Upsert series rows; returns the keys whose rows this statement created, and its transaction. */
  private async upsertSeries(
    labels: SeriesLabels[],
    ids: Map<string, number>,
    now: number,
  ): Promise<Written> {
    const rows = labels.sort((a, b) => (seriesKey(a) < seriesKey(b) ? -1 : 1));
    const res = await this.pool.query<SeriesRow & { created: boolean; xid: string }>(
      `INSERT INTO series (service, op, view, name, peer)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
       ON CONFLICT (service, op, view, name, peer) DO UPDATE SET last_seen = EXCLUDED.last_seen
       RETURNING ${followedId()}, service, op, view, name, peer, (xmax = 0) AS created, pg_current_xact_id()::text AS xid`,
      seriesColumns(rows),
    );
    const created = new Set<string>();
    for (const r of res.rows) {
      const k = seriesKey(r as SeriesLabels);
      this.series.set(k, { id: r.id, at: now });
      ids.set(k, r.id);
      if (r.created) created.add(k);
    }
    return { created, xid: res.rows[0] ? BigInt(res.rows[0].xid) : null };
  }

  private async findSeries(
    labels: SeriesLabels[],
    ids: Map<string, number>,
    now: number,
  ): Promise<void> {
    const res = await this.pool.query<SeriesRow>(
      `SELECT ${followedId('s.')}, s.service, s.op, s.view, s.name, s.peer
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(service, op, view, name, peer)
         JOIN series s USING (service, op, view, name, peer)`,
      seriesColumns(labels),
    );
    for (const r of res.rows) {
      const k = seriesKey(r as SeriesLabels);
      this.series.set(k, { id: r.id, at: now });
      ids.set(k, r.id);
    }
  }

  async resourceIds(resources: ResourceLabels[], now = Date.now()): Promise<Map<string, number>> {
    return (await this.admitResources(resources, now)).ids;
  }

  async admitResources(resources: ResourceLabels[], now = Date.now()): Promise<ResourceAdmission> {
    this.guard?.maybeReload(now);
    const ids = new Map<string, number>();
    const folded = new Map<string, LimitReason>();
    const foldedLabels = new Map<string, ResourceLabels>();
    const known = new Map<string, ResourceLabels>();
    const reserved = new Map<string, ResourceLabels>();
    const unsure = new Map<string, ResourceLabels>();
    for (const r of resources) {
      const k = resourceKey(r);
      if (ids.has(k) || known.has(k) || reserved.has(k) || unsure.has(k) || folded.has(k)) continue;
      const hit = this.resources.get(k);
      if (hit && now - hit.at < REFRESH_MS) ids.set(k, hit.id);
      else if (hit || !this.guard) known.set(k, r);
      else {
        const no = this.refusedResources.get(k);
        if (no && now - no.at < REFRESH_MS) {
          folded.set(k, no.reason);
          foldedLabels.set(k, r);
          continue;
        }
        const reason = this.guard.resources.tryReserve(r.service);
        if (reason === null) reserved.set(k, r);
        else unsure.set(k, r);
      }
    }
    if (known.size || reserved.size) await this.upsertReservedResources(reserved, ids, now, known);
    if (unsure.size) {
      // Over a limit, but the resource may exist already (written before a restart or by another process).
      await this.findResources([...unsure.values()], ids, now);
      const late = new Map<string, ResourceLabels>();
      for (const [k, r] of unsure) {
        if (ids.has(k)) continue;
        const reason = this.guard!.resources.tryReserve(r.service);
        if (reason === null)
          late.set(k, r); // room opened while we looked
        else {
          folded.set(k, reason);
          foldedLabels.set(k, r);
          remember(this.refusedResources, k, reason, now);
        }
      }
      if (late.size) await this.upsertReservedResources(late, ids, now);
    }
    if (foldedLabels.size) {
      // Overflow resources are outside the limits: at most one per service.
      const overflow = new Map<string, ResourceLabels>();
      for (const r of foldedLabels.values()) overflow.set(r.service, overflowResource(r.service));
      const stale = [...overflow.values()].filter(
        (o) => !this.fresh(this.resources, resourceKey(o), now),
      );
      if (stale.length) await this.upsertResources(stale, ids, now);
      for (const [k, r] of foldedLabels)
        ids.set(k, this.resources.get(resourceKey(overflowResource(r.service)))!.id);
    }
    return { ids, folded };
  }

  /** Upsert `known` and `reserved` resources; each reservation is settled whatever happens. */
  private async upsertReservedResources(
    reserved: Map<string, ResourceLabels>,
    ids: Map<string, number>,
    now: number,
    known = new Map<string, ResourceLabels>(),
  ): Promise<void> {
    let done: Written = { created: new Set(), xid: null };
    try {
      done = await this.upsertResources([...known.values(), ...reserved.values()], ids, now);
    } finally {
      for (const [k, r] of reserved)
        this.guard!.resources.settle(r.service, done.created.has(k), done.xid);
    }
  }

  private fresh(cache: Map<string, { at: number }>, k: string, now: number): boolean {
    const hit = cache.get(k);
    return hit !== undefined && now - hit.at < REFRESH_MS;
  }

  /** Upsert resource rows; returns the keys whose rows this statement created, and its transaction. */
  private async upsertResources(
    resources: ResourceLabels[],
    ids: Map<string, number>,
    now: number,
  ): Promise<Written> {
    const rows = [...new Map(resources.map((r) => [resourceKey(r), r])).entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .map(([, r]) => r);
    const res = await this.pool.query<ResourceRow & { created: boolean; xid: string }>(
      `INSERT INTO resources (service, host, attrs, attrs_key)
       SELECT s, h, a::jsonb, k FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(s, h, a, k)
       ON CONFLICT (service, host, attrs_key) DO UPDATE SET last_seen = EXCLUDED.last_seen
       RETURNING id, service, host, attrs_key, (xmax = 0) AS created, pg_current_xact_id()::text AS xid`,
      resourceColumns(rows),
    );
    const created = new Set<string>();
    for (const r of res.rows) {
      const k = `${r.service}\u0000${r.host}\u0000${r.attrs_key}`;
      this.resources.set(k, { id: r.id, at: now });
      ids.set(k, r.id);
      if (r.created) created.add(k);
    }
    return { created, xid: res.rows[0] ? BigInt(res.rows[0].xid) : null };
  }

  private async findResources(
    resources: ResourceLabels[],
    ids: Map<string, number>,
    now: number,
  ): Promise<void> {
    const [service, host, , attrsKeys] = resourceColumns(resources);
    const res = await this.pool.query<ResourceRow>(
      `SELECT r.id, r.service, r.host, r.attrs_key
         FROM unnest($1::text[], $2::text[], $3::text[]) AS u(service, host, attrs_key)
         JOIN resources r USING (service, host, attrs_key)`,
      [service, host, attrsKeys],
    );
    for (const r of res.rows) {
      const k = `${r.service}\u0000${r.host}\u0000${r.attrs_key}`;
      this.resources.set(k, { id: r.id, at: now });
      ids.set(k, r.id);
    }
  }

  async link(pairs: Array<[number, number]>, now = Date.now()): Promise<void> {
    const todo = pairs.filter(([s, r]) => {
      const at = this.links.get(`${s}:${r}`);
      return at === undefined || now - at >= REFRESH_MS;
    });
    if (!todo.length) return;
    todo.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    await this.pool.query(
      `INSERT INTO series_resources (series_id, resource_id)
       SELECT * FROM unnest($1::bigint[], $2::bigint[])
       ON CONFLICT (series_id, resource_id) DO UPDATE SET last_seen = EXCLUDED.last_seen`,
      [todo.map((p) => p[0]), todo.map((p) => p[1])],
    );
    for (const [s, r] of todo) this.links.set(`${s}:${r}`, now);
  }

  /**
   * Fold caller series into edge client views, and refuse the folds of series whose calls pair with
   * more than one edge (core foldDecisions), in the pairing pass's transaction. A series is folded
   * once, never into a folded series nor when one is folded into it. Returns the series folded.
   */
  async foldSeries(db: PoolClient, d: FoldDecisions, now = Date.now()): Promise<FoldResult> {
    const out: FoldResult = { folded: new Map(), refused: [] };
    if (d.fold.size) {
      const pairs = [...d.fold].sort((a, b) => a[0] - b[0]);
      const { rows } = await db.query<SeriesRow & { target: number }>(
        `UPDATE series s SET folded_into = v.target
           FROM unnest($1::bigint[], $2::bigint[]) AS v(id, target)
          WHERE s.id = v.id AND s.folded_into IS NULL AND s.view = 'client'
            AND NOT EXISTS (SELECT 1 FROM series f WHERE f.folded_into = s.id)
            AND EXISTS (SELECT 1 FROM series t WHERE t.id = v.target AND t.folded_into IS NULL)
          RETURNING s.id, s.service, s.op, s.view, s.name, s.peer, v.target`,
        [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
      );
      for (const r of rows) {
        this.series.set(seriesKey(r as SeriesLabels), { id: r.target, at: now });
        out.folded.set(r.id, r.target);
      }
    }
    if (d.refuse.size || d.unfoldInto.size) {
      const { rows } = await db.query<SeriesRow>(
        `UPDATE series SET folded_into = 0
          WHERE (id = ANY($1::bigint[]) AND view = 'client') OR folded_into = ANY($2::bigint[])
          RETURNING id, service, op, view, name, peer`,
        [[...d.refuse].sort((a, b) => a - b), [...d.unfoldInto].sort((a, b) => a - b)],
      );
      for (const r of rows) {
        this.series.set(seriesKey(r as SeriesLabels), { id: r.id, at: now });
        out.refused.push(r.id);
      }
    }
    return out;
  }

  /** Forget cached ids (e.g. after a database restore). */
  clear(): void {
    this.series.clear();
    this.resources.clear();
    this.links.clear();
    this.refusedSeries.clear();
    this.refusedResources.clear();
  }
}

/** What foldSeries changed: series folded (-> the edge client series), series refused for good. */
export interface FoldResult {
  folded: Map<number, number>;
  refused: number[];
}

/** What an upsert created, and the id of its transaction (to tell whether a reload's snapshot saw it). */
interface Written {
  created: Set<string>;
  xid: bigint | null;
}

interface SeriesRow {
  id: number;
  service: string;
  op: string;
  view: string;
  name: string;
  peer: string;
}
interface ResourceRow {
  id: number;
  service: string;
  host: string;
  attrs_key: string;
}

function seriesColumns(rows: SeriesLabels[]): string[][] {
  return [
    rows.map((r) => r.service),
    rows.map((r) => r.op),
    rows.map((r) => r.view),
    rows.map((r) => r.name),
    rows.map((r) => r.peer),
  ];
}

function resourceColumns(rows: ResourceLabels[]): string[][] {
  return [
    rows.map((r) => r.service),
    rows.map((r) => r.host),
    rows.map((r) => JSON.stringify(r.attrs)),
    rows.map((r) => attrsKey(r.attrs)),
  ];
}

function remember(
  cache: Map<string, { reason: LimitReason; at: number }>,
  k: string,
  reason: LimitReason,
  now: number,
): void {
  if (cache.size >= MAX_REFUSED_CACHED) cache.clear();
  cache.set(k, { reason, at: now });
}
