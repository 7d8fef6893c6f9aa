/**
 * Detector states as stored in regress_state.state (the core's binary
 * form, packages/core/src/detect/codec.ts): read in bulk.
 */
import type { PoolClient } from '../db/pool.ts';
import { copyTuples } from './points.ts';

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
