/**
 * The fact core's decideStep asks of a step on a gap view: did its caller
 * feel it (core's callerFeelsGap over its edge's client view)?
 */
import { callerFeelsGap, GAP_FELT_BEFORE_MS } from '@onset/core';
import type { PoolClient } from '../db/pool.ts';
import { stepHistograms } from '../series/queries.ts';

const MIN = 60_000;

/**
 * Whether a gap view's step moved its caller's own latency (core's
 * callerFeelsGap): the per-minute `metric` of its edge's client view, the
 * hour before the onset against the minutes since, through H.
 */
export async function callerFeltGap(
  c: PoolClient,
  labels: { service: string; op: string; name: string; peer: string },
  metric: 'p50' | 'p99',
  onsetMs: number,
  H: number,
): Promise<boolean> {
  const { rows } = await c.query<{ id: string }>(
    `SELECT id::text FROM series
      WHERE service = $1 AND op = $2 AND view = 'client' AND name = $3 AND peer = $4`,
    [labels.service, labels.op, labels.name, labels.peer],
  );
  if (!rows[0]) return true;
  const q = metric === 'p50' ? 0.5 : 0.99;
  const steps = await stepHistograms(c, {
    seriesId: rows[0].id,
    fromMs: onsetMs - GAP_FELT_BEFORE_MS,
    toMs: H,
    stepMs: MIN,
  });
  const t = [...steps.keys()];
  return callerFeelsGap(
    t,
    t.map((k) => steps.get(k)!.quantile(q) / 1000),
    onsetMs,
  );
}
