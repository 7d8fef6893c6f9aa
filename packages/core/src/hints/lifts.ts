import type { AttributeLift, SelectionLift } from '@onset/contract';
import { quantile, sortedCopy } from './stats.ts';
import { templateName } from '../fold.ts';

export type ScalarAttr = string | number | boolean;

/** One call of the regression's series: its measured duration and its span + resource attributes. */
export interface EvidenceSample {
  /** The duration the regression's view measures (for a gap: client minus server). */
  ms: number;
  /** For an edge call: the callee's own (server span) duration. */
  calleeMs?: number;
  attrs: Record<string, ScalarAttr>;
}

/** Numbers are compared by power-of-two bucket, so "open fds 2048–4095" is one value, not 2,000. */
export function liftValue(v: ScalarAttr): string {
  if (typeof v !== 'number') return String(v);
  if (v <= 0) return v === 0 ? '0' : String(v);
  if (Number.isInteger(v) && v < 2) return String(v);
  const k = Math.floor(Math.log2(v));
  const lo = 2 ** k;
  const hi = 2 ** (k + 1);
  return Number.isInteger(v) ? `${lo}–${hi - 1}` : `${lo}–${hi}`;
}

/**
 * Attributes holding a request's URL or path: the old conventions' `http.url` / `http.target` and
 * the current `url.full` / `url.path` carry the concrete ids (`/items/123`), a value per id, so
 * they are compared templated (`/items/{id}`, query dropped; core fold.ts), as series names are.
 */
const URL_KEYS = new Set(['http.url', 'url.full', 'http.target', 'url.path']);

/** The value an attribute is compared by: numbers by bucket (liftValue), URLs templated. */
export function comparedValue(key: string, v: ScalarAttr): string {
  return URL_KEYS.has(key) && typeof v === 'string' ? templateName(v) : liftValue(v);
}

const MAX_LIFTS = 25;
/** Keys with more distinct values than this among slow calls are ids, not explanations. */
const MAX_DISTINCT = 64;

/**
 * BubbleUp-style comparison: among calls slower than the before-p90, how the
 * share of each attribute value changed from before the onset to after.
 * Positive lifts only, largest first (ties: more slow calls after first).
 */
export function attributeLifts(
  before: readonly EvidenceSample[],
  after: readonly EvidenceSample[],
): AttributeLift[] {
  if (!before.length || !after.length) return [];
  const threshold = quantile(sortedCopy(before.map((s) => s.ms)), 0.9);
  const slowBefore = before.filter((s) => s.ms > threshold);
  const slowAfter = after.filter((s) => s.ms > threshold);
  if (!slowAfter.length) return [];
  const cb = countValues(slowBefore);
  const ca = countValues(slowAfter);
  const out: AttributeLift[] = [];
  for (const [key, values] of ca) {
    if (values.size > MAX_DISTINCT) continue;
    for (const [value, n] of values) {
      const shareBefore = slowBefore.length
        ? (cb.get(key)?.get(value) ?? 0) / slowBefore.length
        : 0;
      const shareAfter = n / slowAfter.length;
      const lift = shareAfter - shareBefore;
      if (lift <= 0) continue;
      out.push({
        key,
        value,
        share_before: round(shareBefore),
        share_after: round(shareAfter),
        lift: round(lift),
        count_after: n,
      });
    }
  }
  out.sort(
    (a, b) => b.lift - a.lift || b.count_after - a.count_after || a.key.localeCompare(b.key),
  );
  return out.slice(0, MAX_LIFTS);
}

/** Calls per (key, compared value: numbers bucketed, URLs templated). */
function countValues(samples: readonly EvidenceSample[]): Map<string, Map<string, number>> {
  const m = new Map<string, Map<string, number>>();
  for (const s of samples)
    for (const [k, v] of Object.entries(s.attrs)) {
      let byValue = m.get(k);
      if (!byValue) m.set(k, (byValue = new Map()));
      const b = comparedValue(k, v);
      byValue.set(b, (byValue.get(b) ?? 0) + 1);
    }
  return m;
}

/**
 * A selection of calls (a time range, a latency band of a chart) against the rest of the
 * window: the share of each attribute value among the selected calls minus its share among the
 * rest, the same value bucketing and id-like key cut as `attributeLifts`. Positive lifts only,
 * largest first (ties: more selected calls first); nothing when either side is empty.
 */
export function selectionLifts(
  selected: readonly EvidenceSample[],
  rest: readonly EvidenceSample[],
): SelectionLift[] {
  if (!selected.length || !rest.length) return [];
  const cs = countValues(selected);
  const cr = countValues(rest);
  const out: SelectionLift[] = [];
  for (const [key, values] of cs) {
    if (values.size > MAX_DISTINCT) continue;
    for (const [value, n] of values) {
      const m = cr.get(key)?.get(value) ?? 0;
      const shareSelected = n / selected.length;
      const shareRest = m / rest.length;
      const lift = shareSelected - shareRest;
      if (lift <= 0) continue;
      out.push({
        key,
        value,
        share_selected: round(shareSelected),
        share_rest: round(shareRest),
        lift: round(lift),
        count_selected: n,
        count_rest: m,
      });
    }
  }
  out.sort(
    (a, b) => b.lift - a.lift || b.count_selected - a.count_selected || a.key.localeCompare(b.key),
  );
  return out.slice(0, MAX_LIFTS);
}

const round = (x: number) => Math.round(x * 1000) / 1000;
