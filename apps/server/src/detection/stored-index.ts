/**
 * What a server knows of its shards' stored detector states between passes:
 * each series' checkpoint time (`through` in regress_state) and which series
 * exist. A warm pass used to read both from the database every minute (every
 * row of regress_state, and series against it: ~0.6 s of PostgreSQL at
 * 100,000 series, repeated in full by each server over its own shards); now
 * only shards the server cannot vouch for are read.
 *
 * Vouching: every pass marks the shards it feeds (detect_shard_marks) when
 * it begins (a token of its own, committed before any state is written) and
 * again with an end token once all its batches are committed (a synchronous
 * commit, so everything the pass wrote before it is durable too, the WAL
 * being in order). At the next pass, a shard whose mark is still this
 * server's end token has had no other writer since, and the checkpoint times
 * this server kept for it are exact. Anything else (another server fed it, a
 * pass failed or crashed midway, a new shard) is read again. New series are
 * looked for only above the newest series id seen two passes ago (ids come
 * from a sequence; a registration that commits within a minute of taking its
 * id is seen), and every FULL_EVERY passes everything is read again anyway.
 */
import { randomBytes } from 'node:crypto';
import type { PoolClient } from '../db/pool.ts';
import { readThroughs, seriesWithoutState, type ShardFilter } from './state.ts';

/** Read every held shard again this often (passes), whatever the marks say. */
const FULL_EVERY = 30;

export class StoredIndex {
  /** Checkpoint time per series of the shards in `vouched`. */
  private stored = new Map<number, number>();
  /** Shard -> this server's end token of the last pass that fed it. */
  private vouched = new Map<number, string>();
  private count = 0;
  private passes = 0;
  /** Newest series id when the last two passes began (new series are looked for above the older). */
  private maxIds: [number, number] = [0, 0];
  private readonly id = randomBytes(6).toString('hex');

  /** Forget everything (a pass failed: its marks are not end tokens, and memory may be ahead). */
  reset(): void {
    this.stored = new Map();
    this.vouched.clear();
  }

  /**
   * At a pass's start, holding the shard locks of `held`: mark them, and
   * return every held series' checkpoint time and the held series without a
   * state. `scope` is the pass's filter (null: every shard of `count`).
   */
  async begin(
    c: PoolClient,
    count: number,
    held: readonly number[],
    scope: ShardFilter | null,
  ): Promise<{ stored: Map<number, number>; fresh: number[] }> {
    const token = `${this.id}:${++this.passes}`;
    const { rows } = await c.query<{ shard: number; fed_by: string | null; top: string | null }>(
      `WITH old AS (SELECT u.shard, m.fed_by FROM unnest($2::int[]) AS u(shard)
                      LEFT JOIN detect_shard_marks m ON m.shard = u.shard),
            marked AS (INSERT INTO detect_shard_marks (shard, fed_by) SELECT shard, $1 FROM old
                        ON CONFLICT (shard) DO UPDATE SET fed_by = EXCLUDED.fed_by)
       SELECT old.shard, old.fed_by, (SELECT max(id) FROM series)::text AS top FROM old`,
      [`${token}:start`, held],
    );
    const top = Number(rows[0]?.top ?? 0);
    const full = count !== this.count || this.passes % FULL_EVERY === 0;
    const valid = new Set<number>();
    if (!full)
      for (const r of rows)
        if (r.fed_by !== null && r.fed_by === this.vouched.get(r.shard)) valid.add(r.shard);
    // Keep only the series of shards still vouched for.
    const kept = new Map<number, number>();
    if (valid.size) for (const [id, t] of this.stored) if (valid.has(id % count)) kept.set(id, t);
    this.stored = kept;
    this.vouched.clear();
    this.count = count;
    const unknown = held.filter((s) => !valid.has(s));
    const fresh: number[] = [];
    if (unknown.length) {
      const filter = !valid.size && scope === null ? null : { count, shards: unknown };
      for (const [id, t] of await readThroughs(c, filter)) this.stored.set(id, t);
      fresh.push(...(await seriesWithoutState(c, filter)));
    }
    if (valid.size) {
      // Vouched shards: only series newer than those seen two passes ago can be new.
      const since = Math.min(this.maxIds[0], this.maxIds[1]);
      const filter = { count, shards: [...valid] };
      for (const id of await seriesWithoutState(c, filter, since))
        if (!this.stored.has(id)) fresh.push(id);
    }
    this.maxIds = [this.maxIds[1], top];
    return { stored: this.stored, fresh };
  }

  /** Once every batch of the pass is committed: the end mark, which vouches for `held` next time. */
  async end(c: PoolClient, held: readonly number[]): Promise<void> {
    const token = `${this.id}:${this.passes}:end`;
    await c.query(`UPDATE detect_shard_marks SET fed_by = $1 WHERE shard = ANY($2::int[])`, [
      token,
      held,
    ]);
    for (const s of held) this.vouched.set(s, token);
  }
}
