/**
 * Default SLOs: a threshold suggested from a series' history, so that no
 * latency series has to go unwatched. Histogram-based, hence estimates; the
 * SLO itself then counts good events exactly from raw observations.
 */
import { GAMMA, Histogram, ZERO_BUCKET, type SparseHistogram } from '../histogram.ts';

/**
 * Events at or under `thresholdUs` estimated from a log-bucketed histogram:
 * buckets wholly under count fully, the bucket the threshold cuts counts in
 * proportion to where it cuts on a log scale (values inside a bucket are
 * spread log-uniformly). Error ≤ the one straddling bucket (~2% wide).
 */
export function estimateGoodFromHistogram(h: SparseHistogram, thresholdUs: number): number {
  let good = 0;
  const logG = Math.log(GAMMA);
  for (let k = 0; k < h.idx.length; k++) {
    const i = h.idx[k]!;
    const c = h.cnt[k]!;
    if (i === ZERO_BUCKET) {
      if (thresholdUs >= 0) good += c;
      continue;
    }
    const upper = Math.pow(GAMMA, i);
    const lower = upper / GAMMA;
    if (upper <= thresholdUs) good += c;
    else if (lower < thresholdUs) good += (c * Math.log(thresholdUs / lower)) / logG;
  }
  return good;
}

/** Smallest value of the 1-1.5-2-2.5-3-4-5-6-8 × 10^k sequence at or above `x` (a threshold people can read). */
export function niceCeil(x: number): number {
  if (!(x > 0)) return x;
  const exp = Math.floor(Math.log10(x));
  for (let e = exp - 1; e <= exp + 1; e++) {
    for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8]) {
      const v = Number((m * Math.pow(10, e)).toPrecision(6));
      if (v >= x * (1 - 1e-12)) return v;
    }
  }
  return Number(Math.pow(10, exp + 1).toPrecision(6));
}

export interface ThresholdSuggestion {
  threshold_ms: number;
  objective: number;
  /** The latency that `objective` of the history stayed under (ms). */
  quantile_ms: number;
  /** Share of the history at or under the suggested threshold (estimated). */
  expected_sli: number;
  events: number;
}

/** Headroom over the historical quantile, so normal variation does not burn the budget. */
export const SUGGESTION_HEADROOM = 1.2;

/**
 * Suggest a threshold for `objective`: the history's `objective`-quantile
 * with 20% headroom, rounded up to a readable value. Null without history.
 */
export function suggestThreshold(
  history: SparseHistogram,
  objective: number,
): ThresholdSuggestion | null {
  const h = Histogram.fromSparse(history);
  if (h.count === 0) return null;
  const qUs = h.quantile(objective);
  const thresholdMs = niceCeil(Math.max((qUs / 1000) * SUGGESTION_HEADROOM, 0.001));
  const good = estimateGoodFromHistogram(history, thresholdMs * 1000);
  return {
    threshold_ms: thresholdMs,
    objective,
    quantile_ms: Number((qUs / 1000).toPrecision(6)),
    expected_sli: Math.min(1, Number((good / h.count).toPrecision(6))),
    events: h.count,
  };
}
