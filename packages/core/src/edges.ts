/**
 * One edge, three views (api.md "call on an edge"): what the caller measured
 * (client), what the callee measured (server), and the difference per call
 * (gap). Edge pairing files all three under the caller: `service = caller,
 * peer = callee`. A flat server line under a client line that stepped up is
 * the signature of time lost between the two (kernel, network, Nagle +
 * delayed ACK). Pure: the server answers GET /api/v1/series/{id}/edge with it.
 */

export type EdgeView = 'client' | 'server' | 'gap';
export const EDGE_VIEWS: readonly EdgeView[] = ['client', 'server', 'gap'];

/** Series labels as the edge rule needs them (peer: '' or null when none). */
export interface EdgeLabels {
  service: string;
  op: string;
  view: string;
  name: string;
  peer: string | null;
}

export interface EdgeMembers<S> {
  caller: string | null;
  callee: string | null;
  client: S | null;
  server: S | null;
  gap: S | null;
}

/**
 * The three views of the edge a series belongs to, among `candidates` (the
 * series with the same op and name). The callee's own server series
 * (`service = callee`, no peer) stands in for the server view until pairing
 * has run.
 */
export function findEdge<S extends EdgeLabels>(
  candidates: readonly S[],
  x: EdgeLabels,
): EdgeMembers<S> {
  const same = candidates.filter((s) => s.name === x.name && s.op === x.op);
  const peerOf = (s: EdgeLabels) => s.peer || null;
  let caller: string | null;
  let callee: string | null;
  if (peerOf(x)) {
    caller = x.service;
    callee = peerOf(x);
  } else if (x.view === 'server') {
    callee = x.service;
    caller =
      same.find((s) => (s.view === 'client' || s.view === 'gap') && peerOf(s) === x.service)
        ?.service ?? null;
  } else {
    caller = x.service;
    callee = null;
  }
  const onEdge = (view: EdgeView) =>
    same.find((s) => s.view === view && s.service === caller && !!callee && peerOf(s) === callee) ??
    null;
  const server =
    onEdge('server') ??
    (callee
      ? (same.find((s) => s.view === 'server' && s.service === callee && !peerOf(s)) ?? null)
      : null);
  return { caller, callee, client: onEdge('client'), server, gap: onEdge('gap') };
}

export function medianOf(xs: readonly number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export interface EdgeViewSummary {
  /** Median over the range of the per-step quantile, ms. */
  typical_ms: number | null;
  /** Same, before and after an instant (the onset); null without one. */
  before_ms: number | null;
  after_ms: number | null;
}

/** Summarise one view's per-step quantile values (t in ms), split at `onsetMs` when given. */
export function summarizeView(
  t: readonly number[],
  values: ReadonlyArray<number | null | undefined>,
  onsetMs?: number,
): EdgeViewSummary {
  const before: number[] = [];
  const after: number[] = [];
  t.forEach((tMs, i) => {
    const v = values[i];
    if (v === null || v === undefined || !Number.isFinite(v)) return;
    (onsetMs !== undefined && tMs < onsetMs ? before : after).push(v);
  });
  return {
    typical_ms: medianOf([...before, ...after]),
    before_ms: onsetMs === undefined ? null : medianOf(before),
    after_ms: onsetMs === undefined ? null : medianOf(after),
  };
}

/**
 * The sentence an on-call engineer needs: which side changed. Compares each
 * view's before/after medians; "callers only" when the client (or gap) rose
 * and the server did not.
 */
export function edgeVerdict(
  summary: Partial<Record<EdgeView, EdgeViewSummary | null>>,
): string | null {
  const delta = (s?: EdgeViewSummary | null) =>
    s && s.before_ms !== null && s.after_ms !== null ? s.after_ms - s.before_ms : null;
  const ratio = (s?: EdgeViewSummary | null) =>
    s && s.before_ms && s.after_ms !== null ? s.after_ms / s.before_ms : null;
  const dc = delta(summary.client);
  const ds = delta(summary.server);
  const dg = delta(summary.gap);
  const rs = ratio(summary.server);
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
