/**
 * Shape the heatmap endpoint's per-step sparse histograms into a grid of
 * time columns × log-latency rows. Rows are coarser than the storage buckets
 * (which are ~2% wide): `rowsPerDecade` rows per factor of ten, each row a
 * fixed log interval, so the picture does not depend on the data.
 */
import { bucketValue, ZERO_BUCKET } from '@onset/core';
import type { HeatmapPoint } from '@onset/contract';

export interface HeatmapRow {
  loMs: number;
  hiMs: number;
}

export interface HeatmapFrame {
  /** Column start times, seconds, ascending. */
  x: number[];
  stepMs: number;
  rows: HeatmapRow[];
  /** counts[col * rows.length + row] */
  counts: Float64Array;
  maxCount: number;
  total: number;
  /** Observations ≤ 0 (possible in gap views); not drawable on a log axis. */
  nonPositive: number;
}

export function shapeHeatmap(
  points: readonly HeatmapPoint[],
  stepMs: number,
  rowsPerDecade = 10,
): HeatmapFrame {
  let minRow = Infinity;
  let maxRow = -Infinity;
  // First pass: which rows exist. Bucket → row by the bucket's representative value.
  const rowOf = new Map<number, number>();
  const row = (idx: number) => {
    let r = rowOf.get(idx);
    if (r === undefined) {
      const ms = bucketValue(idx) / 1000;
      r = Math.floor(Math.log10(ms) * rowsPerDecade + 1e-9);
      rowOf.set(idx, r);
    }
    return r;
  };
  for (const p of points)
    for (const i of p.idx) {
      if (i === ZERO_BUCKET) continue;
      const r = row(i);
      if (r < minRow) minRow = r;
      if (r > maxRow) maxRow = r;
    }
  const x = points.map((p) => Date.parse(p.t) / 1000);
  if (minRow > maxRow)
    return {
      x,
      stepMs,
      rows: [],
      counts: new Float64Array(0),
      maxCount: 0,
      total: 0,
      nonPositive: countZero(points),
    };
  const nRows = maxRow - minRow + 1;
  const rows: HeatmapRow[] = [];
  for (let r = minRow; r <= maxRow; r++)
    rows.push({
      loMs: Math.pow(10, r / rowsPerDecade),
      hiMs: Math.pow(10, (r + 1) / rowsPerDecade),
    });
  const counts = new Float64Array(points.length * nRows);
  let maxCount = 0;
  let total = 0;
  let nonPositive = 0;
  points.forEach((p, col) => {
    for (let k = 0; k < p.idx.length; k++) {
      const i = p.idx[k]!;
      const c = p.cnt[k]!;
      if (i === ZERO_BUCKET) {
        nonPositive += c;
        continue;
      }
      const cell = col * nRows + (row(i) - minRow);
      counts[cell] = counts[cell]! + c;
      if (counts[cell]! > maxCount) maxCount = counts[cell]!;
      total += c;
    }
  });
  return { x, stepMs, rows, counts, maxCount, total, nonPositive };
}

function countZero(points: readonly HeatmapPoint[]): number {
  let n = 0;
  for (const p of points) p.idx.forEach((i, k) => i === ZERO_BUCKET && (n += p.cnt[k]!));
  return n;
}

/**
 * Cell intensity in [0, 1]: log of the count, so a handful of slow outliers
 * stays visible next to millions of fast calls. 0 means "draw nothing".
 */
export function cellIntensity(count: number, maxCount: number): number {
  if (!(count > 0) || !(maxCount > 0)) return 0;
  if (maxCount === 1) return 1;
  return 0.15 + 0.85 * (Math.log1p(count) / Math.log1p(maxCount));
}
