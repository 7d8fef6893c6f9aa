/** The three views of an edge among the series. Pure. */
import type { Series } from '@onset/contract';

/**
 * The three views of one edge (api.md "call on an edge"). Edge pairing files
 * all three under the caller: `service = caller, peer = callee` with views
 * client, server (the callee's duration of the paired calls) and gap. The
 * callee's own server series (`service = callee`, no peer) stands in for the
 * server view until pairing has run.
 */
export function edgeSeries(
  all: readonly Series[],
  x: { service: string; name: string; peer?: string | null; view?: string; op?: string },
): {
  client: Series | null;
  server: Series | null;
  gap: Series | null;
  caller: string | null;
  callee: string | null;
} {
  const sameName = all.filter((s) => s.name === x.name && (!x.op || s.op === x.op));
  let caller: string | null;
  let callee: string | null;
  if (x.peer) {
    caller = x.service;
    callee = x.peer;
  } else if (x.view === 'server') {
    callee = x.service;
    caller =
      sameName.find((s) => (s.view === 'client' || s.view === 'gap') && s.peer === x.service)
        ?.service ?? null;
  } else {
    caller = x.service;
    callee = null;
  }
  const onEdge = (view: string) =>
    sameName.find(
      (s) => s.view === view && s.service === caller && !!callee && s.peer === callee,
    ) ?? null;
  const server =
    onEdge('server') ??
    (callee
      ? (sameName.find((s) => s.view === 'server' && s.service === callee && !s.peer) ?? null)
      : null);
  return { client: onEdge('client'), server, gap: onEdge('gap'), caller, callee };
}
