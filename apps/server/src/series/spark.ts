/**
 * Sparklines for list rows: a window cut into 30 steps, the merged histogram
 * of each step per key (a series, or a host of one series), and from them
 * the p99 per step and the p50/p99 of the latest step with calls.
 */
import { Histogram } from '@onset/core';
import type { Pool } from '../db/pool.ts';

export const SPARK_STEPS = 30;
const HOUR_MS = 3_600_000;
/** Longer windows read the hourly rollups (plus the minutes not yet compacted into them). */
const HOURLY_FROM_MS = 2 * 86_400_000;

export interface SparkWindow {
  fromMs: number;
  toMs: number;
  stepMs: number;
}

/** 30 whole-minute steps ending at `toMs` (whole hours on long windows, to line up with rollups). */
export function sparkWindow(fromMs: number, toMs: number): SparkWindow {
  const raw = Math.max(60_000, Math.ceil((toMs - fromMs) / SPARK_STEPS));
  const stepMs =
    raw >= HOUR_MS ? Math.ceil(raw / HOUR_MS) * HOUR_MS : Math.ceil(raw / 60_000) * 60_000;
  return { fromMs: toMs - stepMs * SPARK_STEPS, toMs, stepMs };
}

export type StepHistograms = Map<number, Histogram>;

/** Per key (series id, or host when `byHost`), one merged histogram per step. */
export async function sparkHistograms(
  pool: Pool,
  ids: string[],
  w: SparkWindow,
  byHost = false,
): Promise<Map<string, StepHistograms>> {
  const hourly = w.toMs - w.fromMs >= HOURLY_FROM_MS;
  const key = byHost
    ? `(SELECT r.host FROM resources r WHERE r.id = resource_id)`
    : `series_id::text`;
  const minutes = `SELECT ${key} AS k, extract(epoch FROM minute) * 1000 AS t, idx, cnt FROM histograms
      WHERE series_id = ANY($1::bigint[]) AND minute >= $2 AND minute < $3 ${hourly ? 'AND NOT compacted' : ''}`;
  const sql = hourly
    ? `SELECT ${key} AS k, extract(epoch FROM hour) * 1000 AS t, idx, cnt FROM histograms_hourly
        WHERE series_id = ANY($1::bigint[]) AND hour >= $2 AND hour < $3
       UNION ALL ${minutes}`
    : minutes;
  const { rows } = await pool.query<{ k: string; t: number; idx: number[]; cnt: number[] }>(sql, [
    ids,
    new Date(w.fromMs),
    new Date(w.toMs),
  ]);
  const out = new Map<string, StepHistograms>();
  for (const r of rows) {
    const step = Math.min(SPARK_STEPS - 1, Math.floor((Number(r.t) - w.fromMs) / w.stepMs));
    if (step < 0) continue;
    let steps = out.get(r.k);
    if (!steps) out.set(r.k, (steps = new Map()));
    let h = steps.get(step);
    if (!h) steps.set(step, (h = new Histogram()));
    h.addSparse(r);
  }
  return out;
}

const ms = (us: number) => Number((us / 1000).toPrecision(4));

export interface SparkSummary {
  current: { p50_ms: number | null; p99_ms: number | null; count: number; at: string | null };
  spark: { step_ms: number; p99_ms: Array<number | null> };
}

export function summarize(steps: StepHistograms | undefined, w: SparkWindow): SparkSummary {
  const p99: Array<number | null> = [];
  let last: { k: number; h: Histogram } | null = null;
  for (let k = 0; k < SPARK_STEPS; k++) {
    const h = steps?.get(k);
    if (h && h.count > 0) {
      p99.push(ms(h.quantile(0.99)));
      last = { k, h };
    } else p99.push(null);
  }
  return {
    current: last
      ? {
          p50_ms: ms(last.h.quantile(0.5)),
          p99_ms: ms(last.h.quantile(0.99)),
          count: last.h.count,
          at: new Date(w.fromMs + last.k * w.stepMs).toISOString(),
        }
      : { p50_ms: null, p99_ms: null, count: 0, at: null },
    spark: { step_ms: w.stepMs, p99_ms: p99 },
  };
}
