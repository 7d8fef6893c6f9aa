/**
 * Detection shared across servers: the series are split into shards
 * (`series_id % count`) and every server leases a fair share of them in
 * PostgreSQL (detect_leases, migrations/0018). A server's scheduled passes
 * detect the series of its own shards only, so the detectors it keeps in
 * memory (state-cache.ts) stay warm from pass to pass.
 *
 * Why a lease table rather than session advisory locks or a job library: a
 * lease expires on its own when its server stops renewing it, whether the
 * process died (SIGKILL) or hangs, so takeover is bounded by the TTL; an
 * advisory lock held by a hung process that keeps its connection is never
 * given up, and graphile-worker (already here for cron) hands jobs to
 * whichever worker asks first, with no notion of keeping a shard on the
 * server whose detectors are warm. Mutual exclusion of the work itself is not
 * the lease's job: a pass holds an advisory lock per shard while it runs
 * (pass.ts), so a server that lost a lease mid-pass and its successor never
 * feed a shard at the same time, and either one continues from the
 * checkpoints.
 *
 * Every renewal (every TTL/3) is one transaction, serialised across servers:
 * the server's membership row and its leases are extended; with `live`
 * members, its fair share is count / live (one more for the longest-running
 * `count % live` servers, so the shares add up to count): a server over it
 * gives back its excess (a server joined), one under it takes free or
 * expired shards (a server joined or died). A server that stops cleanly
 * gives everything back.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { DEFAULT_DETECT_SHARDS } from '../config.ts';
import { transactionOn, withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import { detectionSeriesOwned, detectionShardsOwned } from '../observability/metrics.ts';

/** Serialises renewals across servers (the same key space as lock.ts). */
const LEASE_LOCK_KEY = 0x0de7eca;

/** The shard of a series: plain modulo keeps the split even and is cheap in SQL. */
export const shardOf = (seriesId: number, count: number): number => seriesId % count;

/**
 * The cluster's shard count: the rows of detect_leases, created with
 * `configured` shards by the first server (or pass) that finds none.
 */
export async function clusterShardCount(
  c: PoolClient,
  configured = DEFAULT_DETECT_SHARDS,
): Promise<number> {
  const count = async () =>
    (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM detect_leases`)).rows[0]!.n;
  const n = await count();
  if (n > 0) return n;
  await transactionOn(c, async (c) => {
    await c.query(`SELECT pg_advisory_xact_lock($1)`, [LEASE_LOCK_KEY]);
    await createShards(c, configured);
  });
  return count();
}

/** Under LEASE_LOCK_KEY: the cluster's shards, if it has none yet. */
async function createShards(c: PoolClient, n: number): Promise<void> {
  await c.query(
    `INSERT INTO detect_leases (shard) SELECT generate_series(0, $1::int - 1)
      WHERE NOT EXISTS (SELECT 1 FROM detect_leases)`,
    [Math.max(1, Math.floor(n))],
  );
}

export interface ShardLeaseOptions {
  /** Shards to create when the cluster has none yet (ONSET_DETECT_SHARDS); the table's count rules after. */
  shards: number;
  /** A lease not renewed for this long is another server's to take (ONSET_DETECT_LEASE_TTL). */
  ttlMs: number;
  serverId?: string;
}

export interface LeaseLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** The shards one server holds, renewed in the background while it runs. */
export class ShardLeases {
  readonly serverId: string;
  /** The cluster's shard count (rows of detect_leases); 0 before the first renewal. */
  count = 0;
  /** Shards this server holds, ascending. */
  owned: number[] = [];
  /** Series whose detection this server runs (in its shards), as of the last renewal. */
  seriesOwned = 0;
  /** Live members at the last renewal. */
  members = 0;
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | null = null;
  private stopped = false;
  /** Shards and newest series id when `seriesOwned` was last counted. */
  private countedFor = '';

  constructor(
    private readonly pool: Pool,
    private readonly opts: ShardLeaseOptions,
    /** Where lease changes are logged (the scheduler sets it when absent). */
    public log?: LeaseLog,
  ) {
    if (!Number.isInteger(opts.shards) || opts.shards < 1)
      throw new Error(`shard count must be a positive integer, got ${opts.shards}`);
    this.serverId =
      opts.serverId ?? `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  }

  /** Take a first share now, then renew every TTL/3 (failures are retried on the next tick). */
  async start(): Promise<void> {
    await this.renew().catch((err: Error) =>
      this.log?.warn({ err: err.message }, 'detection shards: first lease renewal failed'),
    );
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(
      () => {
        this.renew()
          .catch((err: Error) =>
            this.log?.warn({ err: err.message }, 'detection shards: lease renewal failed'),
          )
          .finally(() => this.schedule());
      },
      Math.max(100, Math.floor(this.opts.ttlMs / 3)),
    );
    this.timer.unref();
  }

  /** Stop renewing; with `release` (a clean stop) give the shards back so others take them at once. */
  async stop(release = true): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.renewing?.catch(() => {});
    if (release)
      await withTransaction(this.pool, async (c) => {
        await c.query(`SELECT pg_advisory_xact_lock($1)`, [LEASE_LOCK_KEY]);
        await c.query(
          `UPDATE detect_leases SET owner = NULL, expires_at = '-infinity', since = NULL WHERE owner = $1`,
          [this.serverId],
        );
        await c.query(`DELETE FROM detect_members WHERE server_id = $1`, [this.serverId]);
      }).catch(() => {});
    this.owned = [];
    this.seriesOwned = 0;
    this.countedFor = '';
    this.publish();
  }

  /** One renewal (also the rebalance); concurrent callers share it. */
  renew(): Promise<void> {
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    const me = this.serverId;
    const ttl = `${Math.ceil(this.opts.ttlMs)} milliseconds`;
    const before = this.owned.join(',');
    const r = await withTransaction(this.pool, async (c) => {
      await c.query(`SELECT pg_advisory_xact_lock($1)`, [LEASE_LOCK_KEY]);
      await createShards(c, this.opts.shards);
      await c.query(
        `INSERT INTO detect_members (server_id, expires_at) VALUES ($1, now() + $2::interval)
         ON CONFLICT (server_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
        [me, ttl],
      );
      await c.query(`DELETE FROM detect_members WHERE expires_at < now()`);
      const { rows: n } = await c.query<{ live: number; rank: number; shards: number }>(
        `SELECT (SELECT count(*) FROM detect_members)::int AS live,
                (SELECT count(*) FROM detect_members m
                  WHERE (m.started_at, m.server_id) < (SELECT started_at, server_id FROM detect_members WHERE server_id = $1))::int AS rank,
                (SELECT count(*) FROM detect_leases)::int AS shards`,
        [me],
      );
      const { live, rank, shards } = n[0]!;
      // count / live each, and one more for the longest-running `count % live` servers: the shares add up to count.
      const fair = Math.floor(shards / live) + (rank < shards % live ? 1 : 0);
      const { rows: mine } = await c.query<{ shard: number }>(
        `WITH renewed AS (UPDATE detect_leases SET expires_at = now() + $2::interval WHERE owner = $1
                           RETURNING shard, since)
         SELECT shard FROM renewed ORDER BY since NULLS FIRST, shard`,
        [me, ttl],
      );
      // Held longest first: those are the shards whose detectors are warm here.
      const byAge = mine.map((x) => x.shard);
      let owned = [...byAge].sort((a, b) => a - b);
      if (owned.length > fair) {
        // A server joined: give back the shards taken most recently, keep the warm ones.
        const excess = byAge.slice(fair);
        await c.query(
          `UPDATE detect_leases SET owner = NULL, expires_at = '-infinity', since = NULL WHERE shard = ANY($1::int[])`,
          [excess],
        );
        owned = byAge.slice(0, fair).sort((a, b) => a - b);
      } else if (owned.length < fair) {
        const { rows: taken } = await c.query<{ shard: number }>(
          `UPDATE detect_leases SET owner = $1, expires_at = now() + $2::interval, since = now()
            WHERE shard IN (SELECT shard FROM detect_leases WHERE owner IS NULL OR expires_at < now()
                             ORDER BY shard LIMIT $3)
            RETURNING shard`,
          [me, ttl, fair - owned.length],
        );
        owned = [...owned, ...taken.map((x) => x.shard)].sort((a, b) => a - b);
      }
      // Counting the series of the owned shards scans the series table: only when the shards or
      // the newest series changed since the last count (series get ids in order; a pass recounts).
      const { rows: top } = await c.query<{ id: string | null }>(
        `SELECT max(id) AS id FROM series`,
      );
      const key = `${shards}/${owned.join(',')}/${top[0]!.id ?? ''}`;
      if (key === this.countedFor) return { live, shards, owned, series: this.seriesOwned, key };
      const { rows: s } = await c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM series WHERE id % $1 = ANY($2::int[])`,
        [shards, owned],
      );
      return { live, shards, owned, series: s[0]!.n, key };
    });
    if (this.stopped) return;
    if (r.shards !== this.opts.shards && this.count !== r.shards)
      this.log?.warn(
        { configured: this.opts.shards, in_effect: r.shards },
        'detection shards: the cluster already has another shard count; using it',
      );
    this.count = r.shards;
    this.members = r.live;
    this.owned = r.owned;
    this.seriesOwned = r.series;
    this.countedFor = r.key;
    this.publish();
    if (r.owned.join(',') !== before)
      this.log?.info(
        { server: this.serverId, shards: r.owned.length, of: r.shards, servers: r.live },
        `detection shards: this server holds ${r.owned.length} of ${r.shards}`,
      );
  }

  /** Set the series count after a pass over the owned shards (it saw every one of them). */
  noteSeries(n: number): void {
    this.seriesOwned = n;
    // Series created during the pass may be missing from it: the next renewal counts again.
    this.countedFor = '';
    this.publish();
  }

  private publish(): void {
    detectionSeriesOwned.set(this.seriesOwned);
    detectionShardsOwned.set(this.owned.length);
  }
}
