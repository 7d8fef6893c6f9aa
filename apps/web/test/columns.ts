import type { QuantileColumns } from '@onset/contract';

/** Test fixture: steps written one per object, turned into the API's columns layout. */
export function columnsOf(
  steps: ReadonlyArray<{ t: number; count: number; q: Record<string, number> }>,
): QuantileColumns {
  const keys = [...new Set(steps.flatMap((s) => Object.keys(s.q)))];
  return {
    t: steps.map((s) => s.t),
    count: steps.map((s) => s.count),
    q: Object.fromEntries(keys.map((k) => [k, steps.map((s) => s.q[k] ?? null)])),
  };
}
