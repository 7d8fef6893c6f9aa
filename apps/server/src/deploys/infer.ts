import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import type { DeployKind } from '@onset/contract';
import { isCitusConnection } from '../db/citus.ts';

/**
 * Inferred deploy markers (api.md "Deploy markers"): when a host starts
 * reporting a new `os.version`, or a service a new `service.version` or
 * `dependency.*` value, record a marker nobody had to post.
 *
 * Input is the `resources` registry: ingest adds a row for every new
 * (service, host, cohort attributes) combination, so a new value shows up as
 * a new row. The time of a change is the first *span time* seen for that row
 * (min(histograms.minute)), not its arrival, so replays and backfills land
 * where they happened.
 */

export interface InferOptions {
  /** Changes of the same (service, attribute, from -> to) this close together are one rollout. */
  windowMs?: number;
  /**
   * Resources younger than this are re-examined on the next pass too: their
   * first spans may still be in flight, and an id sequence can commit out of
   * order, so the cursor only moves past rows old enough to be settled.
   */
  graceMs?: number;
  /** Resources examined per pass (the first pass over an old database catches up in steps). */
  batch?: number;
}

export interface InferResult {
  /** Resources examined. */
  resources: number;
  /** Per-(service, host) value changes found. */
  changes: number;
  created: number;
  extended: number;
}

interface TrackedAttribute {
  kind: Extract<DeployKind, 'kernel' | 'code' | 'dependency'>;
  component: string | null;
}

/** Which cohort attributes mark a deploy when they change, and as what kind. */
function trackedAttribute(key: string): TrackedAttribute | null {
  if (key === 'os.version') return { kind: 'kernel', component: 'kernel' };
  if (key === 'service.version') return { kind: 'code', component: null };
  if (key.startsWith('dependency.') && key.length > 'dependency.'.length)
    return { kind: 'dependency', component: key.slice('dependency.'.length) };
  return null;
}

interface Candidate {
  id: number;
  service: string;
  host: string;
  attrs: Record<string, string>;
  settled: boolean;
  t: Date | null;
}

interface KnownValue {
  value: string;
  first_at: Date;
  deploy_id: number | null;
}

interface Change {
  service: string;
  host: string;
  attribute: string;
  track: TrackedAttribute;
  from: string;
  to: string;
  at: Date;
}

const CANDIDATES_CITUS_SQL = `WITH r AS MATERIALIZED (
     SELECT id, service, host, attrs, first_seen FROM resources WHERE id > $1 ORDER BY id LIMIT $3
   ), h AS (
     SELECT resource_id, min(minute) AS m FROM histograms
      WHERE resource_id = ANY (ARRAY(SELECT id FROM r)) GROUP BY 1
   )
   SELECT r.id, r.service, r.host, r.attrs,
          r.first_seen < now() - $2 * interval '1 millisecond' AS settled,
          COALESCE(h.m, CASE WHEN r.first_seen < now() - $2 * interval '1 millisecond' THEN r.first_seen END) AS t
     FROM r LEFT JOIN h ON h.resource_id = r.id ORDER BY r.id`;

export async function inferMarkers(pool: Pool, opts: InferOptions = {}): Promise<InferResult> {
  const windowMs = opts.windowMs ?? 30 * 60_000;
  const graceMs = opts.graceMs ?? 120_000;
  const batch = opts.batch ?? 5000;
  return withTransaction(pool, async (c) => {
    // The cursor row lock also keeps two passes (two servers, or a test and the cron) from interleaving.
    const cur = await c.query<{ last: number }>(
      `SELECT last_resource_id AS last FROM deploy_inference_cursor FOR UPDATE`,
    );
    const last = cur.rows[0]?.last ?? 0;
    // On Citus (db/citus.ts) no correlated subquery reaches the distributed histograms: their
    // first minutes are read per resource in one grouped statement instead.
    const { rows } = await c.query<Candidate>(
      (await isCitusConnection(c))
        ? CANDIDATES_CITUS_SQL
        : `SELECT r.id, r.service, r.host, r.attrs,
              r.first_seen < now() - $2 * interval '1 millisecond' AS settled,
              COALESCE((SELECT min(h.minute) FROM histograms h WHERE h.resource_id = r.id),
                       -- no spans stored for it (ingest failed after registering): arrival is the best we have
                       CASE WHEN r.first_seen < now() - $2 * interval '1 millisecond' THEN r.first_seen END) AS t
         FROM resources r WHERE r.id > $1 ORDER BY r.id LIMIT $3`,
      [last, graceMs, batch],
    );
    const result: InferResult = { resources: rows.length, changes: 0, created: 0, extended: 0 };

    // Oldest first, so a host's values are met in the order it ran them.
    const ready = rows.filter((r): r is Candidate & { t: Date } => r.t !== null);
    ready.sort((a, b) => a.t.getTime() - b.t.getTime() || a.id - b.id);
    for (const r of ready) {
      for (const [attribute, value] of Object.entries(r.attrs)) {
        const track = trackedAttribute(attribute);
        if (!track || typeof value !== 'string') continue;
        await observeValue(
          c,
          { service: r.service, host: r.host, attribute, track, value, at: r.t },
          windowMs,
          result,
        );
      }
    }

    let next = last;
    for (const r of rows) {
      if (!r.settled) break;
      next = r.id;
    }
    if (next !== last)
      await c.query(`UPDATE deploy_inference_cursor SET last_resource_id = $1`, [next]);
    return result;
  });
}

/** Record that (service, host) reported `value` for `attribute` from `at` on; a new value after another is a change. */
async function observeValue(
  c: PoolClient,
  v: {
    service: string;
    host: string;
    attribute: string;
    track: TrackedAttribute;
    value: string;
    at: Date;
  },
  windowMs: number,
  result: InferResult,
): Promise<void> {
  const { rows: known } = await c.query<KnownValue>(
    `SELECT value, first_at, deploy_id FROM deploy_inference_values
      WHERE service = $1 AND host = $2 AND attribute = $3 ORDER BY first_at`,
    [v.service, v.host, v.attribute],
  );
  const same = known.find((k) => k.value === v.value);
  if (same) {
    // Seen before; earlier spans of it may have arrived late (re-examined young resources, backfills).
    if (v.at < same.first_at) {
      await c.query(
        `UPDATE deploy_inference_values SET first_at = $5 WHERE service = $1 AND host = $2 AND attribute = $3 AND value = $4`,
        [v.service, v.host, v.attribute, v.value, v.at],
      );
      if (same.deploy_id !== null)
        await c.query(
          `UPDATE deploys SET at = LEAST(at, $2) WHERE id = $1 AND source = 'inferred'`,
          [same.deploy_id, v.at],
        );
    }
    return;
  }

  const base = { service: v.service, host: v.host, attribute: v.attribute, track: v.track };
  const before = known.filter((k) => k.first_at <= v.at).at(-1);
  let deployId: number | null = null;
  if (before) {
    deployId = await recordChange(
      c,
      { ...base, from: before.value, to: v.value, at: v.at },
      windowMs,
      result,
    );
  } else {
    // Older than everything known (a backfill): if the earliest known value was
    // taken as this host's first, it was in fact a change away from this one.
    const after = known[0];
    if (after && after.deploy_id === null) {
      const id = await recordChange(
        c,
        { ...base, from: v.value, to: after.value, at: after.first_at },
        windowMs,
        result,
      );
      await c.query(
        `UPDATE deploy_inference_values SET deploy_id = $5 WHERE service = $1 AND host = $2 AND attribute = $3 AND value = $4`,
        [v.service, v.host, v.attribute, after.value, id],
      );
    }
  }
  // A (service, host)'s very first value is no change: no marker, just remembered.
  await c.query(
    `INSERT INTO deploy_inference_values (service, host, attribute, value, first_at, deploy_id)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [v.service, v.host, v.attribute, v.value, v.at, deployId],
  );
}

/**
 * Fold one host's change into the marker of its rollout: the same
 * (service, kind, component, from -> to) within the window of that marker's
 * changes so far, extending its hosts and moving `at` to the earliest change.
 * Kernels belong to hosts, not services, so kernel markers group across
 * services (service null) unless the spans carry no host name.
 */
async function recordChange(
  c: PoolClient,
  ch: Change,
  windowMs: number,
  result: InferResult,
): Promise<number> {
  result.changes++;
  const service = ch.track.kind === 'kernel' && ch.host !== '' ? null : ch.service;
  const hosts = ch.host !== '' ? [ch.host] : [];
  const found = await c.query<{ id: number }>(
    `SELECT id FROM deploys
      WHERE source = 'inferred' AND kind = $1 AND service IS NOT DISTINCT FROM $2 AND component IS NOT DISTINCT FROM $3
        AND from_version = $4 AND to_version = $5
        AND $6::timestamptz >= at - $7 * interval '1 millisecond'
        AND $6::timestamptz <= COALESCE(inferred_last_at, at) + $7 * interval '1 millisecond'
      ORDER BY at DESC LIMIT 1 FOR UPDATE`,
    [ch.track.kind, service, ch.track.component, ch.from, ch.to, ch.at, windowMs],
  );
  if (found.rows[0]) {
    const id = found.rows[0].id;
    await c.query(
      `UPDATE deploys SET hosts = ARRAY(SELECT DISTINCT h FROM unnest(hosts || $2::text[]) AS h ORDER BY h),
                          at = LEAST(at, $3), inferred_last_at = GREATEST(COALESCE(inferred_last_at, at), $3)
        WHERE id = $1`,
      [id, hosts, ch.at],
    );
    result.extended++;
    return id;
  }
  const ins = await c.query<{ id: number }>(
    `INSERT INTO deploys (service, hosts, kind, component, from_version, to_version, description, at, source, inferred_last_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'inferred', $8) RETURNING id`,
    [
      service,
      hosts,
      ch.track.kind,
      ch.track.component,
      ch.from,
      ch.to,
      `${ch.attribute} ${ch.from} → ${ch.to} (inferred from telemetry)`,
      ch.at,
    ],
  );
  result.created++;
  return ins.rows[0]!.id;
}
