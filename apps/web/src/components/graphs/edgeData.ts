/**
 * One edge, three views on one chart: what the caller measured (client),
 * what the callee measured (server), and the difference per call (gap).
 * A flat server line under a client line that stepped up is the signature of
 * time lost between the two (kernel, network, Nagle + delayed ACK).
 */
import type { QuantilesColumns } from '@onset/contract';
import { alignLines, type LatencyFrame, type LineColor } from './latencyFrame.ts';
import { splitAt, timedValues } from './quantileData.ts';

export type EdgeView = 'client' | 'server' | 'gap';
export const EDGE_VIEWS: readonly EdgeView[] = ['client', 'server', 'gap'];

export interface EdgeSummary {
  view: EdgeView;
  /** Median over the range of the per-step quantile, ms. */
  typicalMs: number | null;
  /** Same, before and after an instant (the onset), when one is given. */
  beforeMs: number | null;
  afterMs: number | null;
}

export function shapeEdge(
  responses: Partial<Record<EdgeView, QuantilesColumns | undefined>>,
  q: string,
  opts: { onsetMs?: number; dropNonPositive?: boolean } = {},
): { frame: LatencyFrame; summary: EdgeSummary[] } {
  const present = EDGE_VIEWS.filter((v) => responses[v]);
  const stepMs = Math.min(...present.map((v) => responses[v]!.step_ms), Infinity);
  const frame = alignLines(
    present.map((v) => ({
      key: v,
      label: v === 'gap' ? 'gap (client − server)' : v,
      color: v as LineColor,
      width: v === 'gap' ? 2 : 1.5,
      dash: v === 'server',
      points: timedValues(responses[v]!.columns, q, opts),
    })),
    Number.isFinite(stepMs) ? stepMs : 60_000,
  );
  const summary = present.map<EdgeSummary>((v) => {
    const { before, after } = splitAt(responses[v]!.columns, q, opts.onsetMs);
    return {
      view: v,
      typicalMs: median([...before, ...after]),
      beforeMs: opts.onsetMs === undefined ? null : median(before),
      afterMs: opts.onsetMs === undefined ? null : median(after),
    };
  });
  return { frame, summary };
}

export function median(xs: readonly number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * The sentence an on-call engineer needs: which side changed. Compares each
 * view's before/after medians; "callers only" when the client (or gap) rose
 * and the server did not.
 */
export function edgeVerdict(summary: readonly EdgeSummary[]): string | null {
  const get = (v: EdgeView) => summary.find((s) => s.view === v);
  const delta = (s?: EdgeSummary) =>
    s && s.beforeMs !== null && s.afterMs !== null ? s.afterMs - s.beforeMs : null;
  const ratio = (s?: EdgeSummary) =>
    s && s.beforeMs && s.afterMs !== null ? s.afterMs / s.beforeMs : null;
  const dc = delta(get('client'));
  const ds = delta(get('server'));
  const dg = delta(get('gap'));
  const rs = ratio(get('server'));
  const callerDelta = dc ?? dg;
  if (callerDelta === null) return null;
  const serverFlat =
    ds === null || Math.abs(ds) < Math.max(0.2 * callerDelta, 0.5) || (rs !== null && rs < 1.2);
  if (callerDelta > 0 && serverFlat)
    return 'Only callers see it: the server view stayed flat, the time is lost between caller and callee (network, kernel, client library).';
  if (callerDelta > 0 && ds !== null && ds > 0)
    return 'The server itself got slower; callers see the same change.';
  return null;
}
