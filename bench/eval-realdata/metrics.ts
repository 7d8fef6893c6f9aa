/**
 * TCPDBench's scores for one series (van den Burg & Williams, "An evaluation
 * of change point detection algorithms", metrics.py): F1 with a margin of 5
 * points and the covering metric, both averaged over the annotators the way
 * TCPDBench does. Index 0 is added to every set; each true index is matched
 * at most once.
 */

/** Annotator id -> indices (first point of a new segment, 0-based). */
export type Annotations = Record<string, readonly number[]>;

export const MARGIN = 5;

/** The points of `truth` matched by a distinct prediction within `margin` (nearest first). */
function truePositives(truth: Iterable<number>, predictions: Iterable<number>, margin: number) {
  const left = new Set(predictions);
  let hits = 0;
  for (const tau of truth) {
    let best: number | undefined;
    let bestDist = Infinity;
    for (const x of left) {
      const d = Math.abs(tau - x);
      if (d <= margin && (d < bestDist || (d === bestDist && x < best!))) {
        best = x;
        bestDist = d;
      }
    }
    if (best === undefined) continue;
    hits++;
    left.delete(best);
  }
  return hits;
}

/** Only what TCPDBench scores: distinct indices with 1 <= i < n - 1. */
export function cleanPredictions(predictions: readonly number[], n: number): number[] {
  return [...new Set(predictions)].filter((i) => i >= 1 && i < n - 1).sort((a, b) => a - b);
}

export function f1Score(
  annotations: Annotations,
  predictions: readonly number[],
  margin = MARGIN,
): { f1: number; precision: number; recall: number } {
  const sets = Object.values(annotations).map((a) => new Set([0, ...a]));
  const x = new Set([0, ...predictions]);
  const union = new Set<number>();
  for (const s of sets) for (const t of s) union.add(t);
  const precision =
    truePositives(
      [...union].sort((a, b) => a - b),
      x,
      margin,
    ) / x.size;
  const recall =
    sets.reduce(
      (acc, s) =>
        acc +
        truePositives(
          [...s].sort((a, b) => a - b),
          x,
          margin,
        ) /
          s.size,
      0,
    ) / sets.length;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { f1, precision, recall };
}

/** Segments [start, end) cut by the change points. */
function segments(cps: Iterable<number>, n: number): Array<[number, number]> {
  const cuts = [...new Set([...cps].filter((c) => c > 0 && c < n))].sort((a, b) => a - b);
  const out: Array<[number, number]> = [];
  let start = 0;
  for (const c of cuts) {
    out.push([start, c]);
    start = c;
  }
  out.push([start, n]);
  return out;
}

function jaccard(a: [number, number], b: [number, number]): number {
  const inter = Math.max(0, Math.min(a[1], b[1]) - Math.max(a[0], b[0]));
  const union = a[1] - a[0] + (b[1] - b[0]) - inter;
  return union === 0 ? 0 : inter / union;
}

/** How well the predicted segmentation covers one annotator's (length-weighted best Jaccard). */
function coverSingle(
  predicted: Array<[number, number]>,
  truth: Array<[number, number]>,
  n: number,
) {
  let c = 0;
  for (const r of truth) {
    let best = 0;
    for (const p of predicted) best = Math.max(best, jaccard(r, p));
    c += (r[1] - r[0]) * best;
  }
  return c / n;
}

export function coverScore(
  annotations: Annotations,
  predictions: readonly number[],
  n: number,
): number {
  const predicted = segments(predictions, n);
  const all = Object.values(annotations);
  return all.reduce((acc, a) => acc + coverSingle(predicted, segments(a, n), n), 0) / all.length;
}
