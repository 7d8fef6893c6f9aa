/**
 * The detection pass's own tables: regress_state (one detector state per
 * series, in the core's binary form, packages/core/src/detect/codec.ts,
 * with the minute it has seen everything before) and regress_pass (the last
 * pass). Every query on them is here.
 */
import type { PoolClient, Queryable } from '../db/pool.ts';
import { copyTuples } from './points.ts';
import { shownSeries } from '../otlp/registry.ts';

/** Rows per read of the pass's series index: the driver's row objects stay a fixed few MB. */
const INDEX_CHUNK = 50_000;

/** Some shards of the series (shards.ts): `series_id % count` is one of `shards`. */
export interface ShardFilter {
  count: number;
  shards: readonly number[];
}

/** SQL condition on `col` for a filter whose count and shards are parameters $2 and $3 (none: every series). */
const inShards = (col: string, f: ShardFilter | null) =>
  f ? ` AND ${col} % $2 = ANY($3::int[])` : '';
const shardArgs = (f: ShardFilter | null) => (f ? [f.count, f.shards] : []);

/** `through` (epoch ms) of every stored state (read in keyset chunks: ~80 bytes per series kept). */
export async function readThroughs(
  client: PoolClient,
  filter: ShardFilter | null = null,
): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (let after = 0; ;) {
    const { rows } = await client.query<{ id: string; through: number }>(
      `SELECT series_id AS id, (extract(epoch FROM through) * 1000)::float8 AS through FROM regress_state
        WHERE series_id > $1${inShards('series_id', filter)} ORDER BY series_id LIMIT ${INDEX_CHUNK}`,
      [after, ...shardArgs(filter)],
    );
    for (const r of rows) out.set(Number(r.id), Number(r.through));
    if (rows.length < INDEX_CHUNK) return out;
    after = Number(rows[rows.length - 1]!.id);
  }
}

/** Ids of the series that have no state yet (new series); their labels are read per batch. */
export async function seriesWithoutState(
  client: PoolClient,
  filter: ShardFilter | null = null,
  /** Only series with a greater id. */
  above = 0,
): Promise<number[]> {
  const out: number[] = [];
  for (let after = above; ;) {
    const { rows } = await client.query<{ id: string }>(
      `SELECT s.id FROM series s
        WHERE s.id > $1${inShards('s.id', filter)} AND ${shownSeries()} AND NOT EXISTS (SELECT 1 FROM regress_state r WHERE r.series_id = s.id)
        ORDER BY s.id LIMIT ${INDEX_CHUNK}`,
      [after, ...shardArgs(filter)],
    );
    for (const r of rows) out.push(Number(r.id));
    if (rows.length < INDEX_CHUNK) return out;
    after = out[out.length - 1]!;
  }
}

/**
 * Write states as of `throughMs` (never over a newer one), 500 per
 * statement. Buffers as individual parameters travel in binary; an array
 * of them would be hex text.
 */
export async function writeStates(
  client: PoolClient,
  throughMs: number,
  states: ReadonlyArray<readonly [id: number, state: Uint8Array]>,
): Promise<void> {
  for (let i = 0; i < states.length; i += 500) {
    const args: unknown[] = [new Date(throughMs)];
    const values = states.slice(i, i + 500).map(([id, bytes]) => {
      args.push(id, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      return `($${args.length - 1}::bigint, $1::timestamptz, $${args.length}::bytea, now())`;
    });
    await client.query(
      `INSERT INTO regress_state (series_id, through, state, updated_at) VALUES ${values.join(', ')}
       ON CONFLICT (series_id) DO UPDATE SET through = EXCLUDED.through, state = EXCLUDED.state, updated_at = EXCLUDED.updated_at
        WHERE regress_state.through <= EXCLUDED.through`,
      args,
    );
  }
}

/** Series that had no new minutes: their stored state stands for every minute before `throughMs`. */
export async function advanceThroughs(
  client: PoolClient,
  throughMs: number,
  ids: readonly number[],
): Promise<void> {
  if (!ids.length) return;
  await client.query(
    `UPDATE regress_state SET through = $1, updated_at = now() WHERE series_id = ANY($2::bigint[]) AND through < $1`,
    [new Date(throughMs), ids],
  );
}

/** Record a finished pass (GET /api/v1/detect reads it). */
export async function recordPass(
  client: PoolClient,
  throughMs: number,
  startedMs: number,
  durationMs: number,
  result: unknown,
): Promise<void> {
  await client.query(
    `UPDATE regress_pass SET passes = passes + 1, through = $1, started_at = $2, duration_ms = $3, result = $4`,
    [new Date(throughMs), new Date(startedMs), durationMs, JSON.stringify(result)],
  );
}

export interface StoredState {
  through: number;
  state: Buffer;
}

/**
 * States of these series, read through binary COPY: as a query result a
 * bytea arrives hex-encoded (twice the bytes, and a decode per row), which
 * dominated loading 10,000 states.
 */
export async function readStates(
  client: PoolClient,
  ids: readonly number[],
): Promise<Map<number, StoredState>> {
  const out = new Map<number, StoredState>();
  if (!ids.length) return out;
  for (const id of ids) if (!Number.isSafeInteger(id)) throw new Error(`bad series id ${id}`);
  await copyTuples(
    client,
    `COPY (SELECT series_id, (extract(epoch FROM through) * 1000)::float8, state FROM regress_state
            WHERE series_id = ANY('{${ids.join(',')}}'::bigint[])) TO STDOUT (FORMAT binary)`,
    (buf, pos) => {
      let p = pos + 2 + 4;
      const id = Number(buf.readBigInt64BE(p));
      p += 8 + 4;
      const through = buf.readDoubleBE(p);
      p += 8;
      const len = buf.readInt32BE(p);
      p += 4;
      out.set(id, { through, state: Buffer.from(buf.subarray(p, p + len)) });
    },
  );
  return out;
}

/** The pass counter and the last pass's result (null before the first). */
export async function readLastPass<R>(
  db: Queryable,
): Promise<{ passes: number; started_at: Date | null; result: R | null } | undefined> {
  const { rows } = await db.query<{ passes: number; started_at: Date | null; result: R | null }>(
    `SELECT passes, started_at, result FROM regress_pass`,
  );
  return rows[0];
}
