import type { ResourceLabels, SeriesLabels } from '@onset/core';
import type { Pool } from '../db/pool.ts';
import { textDigest } from './sanitize.ts';

const REFRESH_MS = 60_000;

export function seriesKey(s: SeriesLabels): string {
  return `${s.service}\u0000${s.op}\u0000${s.view}\u0000${s.name}\u0000${s.peer}`;
}
export function resourceKey(r: ResourceLabels): string {
  return `${r.service}\u0000${r.host}\u0000${attrsKey(r.attrs)}`;
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
 * Ids for series and resources, cached in memory. Registry rows are upserted
 * in their own short statements (never inside an ingest transaction) so
 * concurrent requests for the same series do not queue on a row lock.
 */
export class Registry {
  private readonly series = new Map<string, { id: number; at: number }>();
  private readonly resources = new Map<string, { id: number; at: number }>();
  private readonly links = new Map<string, number>();
  constructor(private readonly pool: Pool) {}

  async seriesIds(labels: SeriesLabels[], now = Date.now()): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const missing = new Map<string, SeriesLabels>();
    for (const l of labels) {
      const k = seriesKey(l);
      const hit = this.series.get(k);
      if (hit && now - hit.at < REFRESH_MS) out.set(k, hit.id);
      else missing.set(k, l);
    }
    if (missing.size) {
      const rows = [...missing.values()].sort((a, b) => (seriesKey(a) < seriesKey(b) ? -1 : 1));
      const res = await this.pool.query<{
        id: number;
        service: string;
        op: string;
        view: string;
        name: string;
        peer: string;
      }>(
        `INSERT INTO series (service, op, view, name, peer)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
         ON CONFLICT (service, op, view, name, peer) DO UPDATE SET last_seen = now()
         RETURNING id, service, op, view, name, peer`,
        [
          rows.map((r) => r.service),
          rows.map((r) => r.op),
          rows.map((r) => r.view),
          rows.map((r) => r.name),
          rows.map((r) => r.peer),
        ],
      );
      for (const r of res.rows) {
        const k = seriesKey(r as SeriesLabels);
        this.series.set(k, { id: r.id, at: now });
        out.set(k, r.id);
      }
    }
    return out;
  }

  async resourceIds(resources: ResourceLabels[], now = Date.now()): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const missing = new Map<string, ResourceLabels>();
    for (const r of resources) {
      const k = resourceKey(r);
      const hit = this.resources.get(k);
      if (hit && now - hit.at < REFRESH_MS) out.set(k, hit.id);
      else missing.set(k, r);
    }
    if (missing.size) {
      const rows = [...missing.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([, r]) => r);
      const res = await this.pool.query<{
        id: number;
        service: string;
        host: string;
        attrs_key: string;
      }>(
        `INSERT INTO resources (service, host, attrs, attrs_key)
         SELECT s, h, a::jsonb, k FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(s, h, a, k)
         ON CONFLICT (service, host, attrs_key) DO UPDATE SET last_seen = now()
         RETURNING id, service, host, attrs_key`,
        [
          rows.map((r) => r.service),
          rows.map((r) => r.host),
          rows.map((r) => JSON.stringify(r.attrs)),
          rows.map((r) => attrsKey(r.attrs)),
        ],
      );
      for (const r of res.rows) {
        const k = `${r.service}\u0000${r.host}\u0000${r.attrs_key}`;
        this.resources.set(k, { id: r.id, at: now });
        out.set(k, r.id);
      }
    }
    return out;
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
       ON CONFLICT (series_id, resource_id) DO UPDATE SET last_seen = now()`,
      [todo.map((p) => p[0]), todo.map((p) => p[1])],
    );
    for (const [s, r] of todo) this.links.set(`${s}:${r}`, now);
  }

  /** Forget cached ids (e.g. after a database restore). */
  clear(): void {
    this.series.clear();
    this.resources.clear();
    this.links.clear();
  }
}
