/**
 * The cardinality guard: per-service and global limits on series and on
 * resources (docs/api.md "Cardinality limits").
 *
 * - A span or data point whose series would be new beyond a limit is dropped
 *   and counted (kind `series`): folding unrelated operations into one
 *   overflow series would give it a meaningless latency distribution and
 *   false regressions. Existing series keep receiving data.
 * - A span whose resource (service, host, cohort attributes) would be new
 *   beyond a limit is kept and stored under its service's overflow resource
 *   (host '', attribute `onset.overflow=true`), counted as kind `resource`:
 *   its series stays whole, only the host/cohort split loses that detail.
 *
 * Counts live in memory (see budget.ts), loaded from the database at start
 * and reloaded every minute; drops are counted since the process started and
 * shown in /metrics and GET /api/v1/limits.
 */
import type { Pool } from '../db/pool.ts';
import type { CardinalityLimits } from '../config.ts';
import { Budget, type LimitReason } from './budget.ts';

export type { LimitReason } from './budget.ts';
export type LimitKind = 'series' | 'resource';

const RELOAD_MS = 60_000;
/** Per-service drop records kept for the API; beyond this, drops are summed under `otherServices`. */
const MAX_SERVICES_TRACKED = 100;
const EXAMPLES_PER_SERVICE = 3;

export interface ServiceDrops {
  service: string;
  series: number;
  resource: number;
  firstAt: number;
  lastAt: number;
  /** A few refused series names, to find the instrumentation that makes them. */
  examples: string[];
}

export class CardinalityGuard {
  readonly series: Budget;
  readonly resources: Budget;
  /** Items (spans, data points) affected, by kind and reason. */
  readonly dropped = new Map<`${LimitKind}:${LimitReason}`, number>();
  readonly byService = new Map<string, ServiceDrops>();
  otherServices = { series: 0, resource: 0 };
  readonly since = Date.now();
  private loadedAt = 0;
  private reloading: Promise<void> | null = null;

  constructor(
    readonly limits: CardinalityLimits,
    private readonly pool: Pool,
  ) {
    this.series = new Budget(limits.seriesPerService, limits.series);
    this.resources = new Budget(limits.resourcesPerService, limits.resources);
  }

  budget(kind: LimitKind): Budget {
    return kind === 'series' ? this.series : this.resources;
  }

  /** Counts from the database; called at start and, in the background, once a minute. */
  async reload(): Promise<void> {
    this.series.beginReload();
    this.resources.beginReload();
    // Counts and the snapshot they were read under, in one statement per table.
    const counts = (sql: string) =>
      this.pool.query<{ snap: string; rows: Array<{ service: string; n: number }> | null }>(
        `SELECT pg_current_snapshot()::text AS snap,
                (SELECT json_agg(json_build_object('service', service, 'n', n)) FROM (${sql}) c) AS rows`,
      );
    const [s, r] = await Promise.all([
      counts('SELECT service, count(*)::int AS n FROM series GROUP BY service'),
      // Overflow resources are outside the limit (one per service at most).
      counts(
        `SELECT service, count(*)::int AS n FROM resources WHERE NOT attrs ? 'onset.overflow' GROUP BY service`,
      ),
    ]).catch((err) => {
      this.series.abortReload();
      this.resources.abortReload();
      throw err;
    });
    this.series.load(s.rows[0]!.rows ?? [], s.rows[0]!.snap);
    this.resources.load(r.rows[0]!.rows ?? [], r.rows[0]!.snap);
    this.loadedAt = Date.now();
  }

  /** Start a background reload when the counts are older than a minute (never more than one at a time). */
  maybeReload(now = Date.now()): void {
    if (this.reloading || now - this.loadedAt < RELOAD_MS) return;
    this.reloading = this.reload()
      .catch(() => {
        // Keep the counts we have; the next request tries again.
      })
      .finally(() => {
        this.reloading = null;
      });
  }

  /** Count `n` items whose new series/resource was refused. */
  drop(kind: LimitKind, reason: LimitReason, service: string, n: number, example?: string): void {
    const key = `${kind}:${reason}` as const;
    this.dropped.set(key, (this.dropped.get(key) ?? 0) + n);
    const now = Date.now();
    let rec = this.byService.get(service);
    if (!rec) {
      if (this.byService.size >= MAX_SERVICES_TRACKED) {
        this.otherServices[kind] += n;
        return;
      }
      rec = { service, series: 0, resource: 0, firstAt: now, lastAt: now, examples: [] };
      this.byService.set(service, rec);
    }
    rec[kind] += n;
    rec.lastAt = now;
    if (example !== undefined && rec.examples.length < EXAMPLES_PER_SERVICE) {
      if (!rec.examples.includes(example)) rec.examples.push(example);
    }
  }

  droppedTotal(kind: LimitKind): number {
    let n = 0;
    for (const [k, v] of this.dropped) if (k.startsWith(`${kind}:`)) n += v;
    return n;
  }
}
