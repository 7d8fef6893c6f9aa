/**
 * Pair first, then classify (api.md "call on an edge"). A caller's CLIENT
 * span is classified at ingest from what its SDK wrote: Python's `requests`
 * names it `GET` with only `http.url`, Go's `otelhttp` `HTTP GET` with
 * `server.address` an IP. Once its child SERVER span arrives, the call is a
 * view of the edge (caller -> callee service, callee's operation name), and
 * that is what the caller's series should be called. Edge pairing then
 * *folds* the caller's own series into the edge's client view: from then on
 * spans with the caller's labels land in the edge's client series, and the
 * caller's own series is hidden (its calls are the edge's already). A
 * caller series whose calls never pair (an external API) is never folded
 * and keeps its own name and the peer from its URL.
 *
 * A series whose calls pair with more than one edge (one URL host in front
 * of two services) is refused for good: it stays the caller's own, and
 * pairing files a client view per edge as it always did. Pure: the pairing
 * pass (apps/server/src/edges/pairing.ts) asks it per batch of calls.
 */
import type { Op } from '@onset/contract';
import type { SeriesLabels } from './classify.ts';

/** The caller's view of an edge: the labels pairing files its client view under. */
export function edgeClientLabels(
  caller: string,
  calleeOp: Op,
  calleeName: string,
  callee: string,
): SeriesLabels {
  return { service: caller, op: calleeOp, view: 'client', name: calleeName, peer: callee };
}

/** Whether a client series already is the edge's client view (our own clients name it so). */
export function isEdgeClientView(
  client: Pick<SeriesLabels, 'view' | 'name' | 'peer'>,
  edge: Pick<SeriesLabels, 'name' | 'peer'>,
): boolean {
  return client.view === 'client' && client.name === edge.name && client.peer === edge.peer;
}

/** One paired call as folding sees it. */
export interface FoldCall {
  /** The series the client span was written to. */
  client: number;
  /** That series' fold: null never folded, 0 refused, else the edge client series it goes to. */
  foldedInto: number | null;
  /** The client series' labels are the edge's client view. */
  own: boolean;
  /** The edge's client view series. */
  edge: number;
}

export interface FoldDecisions {
  /** Client series -> the edge client series its spans go to from now on. */
  fold: Map<number, number>;
  /** Client series whose calls pair with more than one edge: never folded. */
  refuse: Set<number>;
  /** Edge client series that turned out to pair with another edge too: the series folded into them are refused. */
  unfoldInto: Set<number>;
}

/**
 * What a batch of paired calls says about folding. `known` carries this
 * pass's earlier decisions (the database's answer can be older than them):
 * client series -> its fold as decided so far.
 */
export function foldDecisions(
  calls: readonly FoldCall[],
  known: ReadonlyMap<number, number> = new Map(),
): FoldDecisions {
  const edgesOf = new Map<number, Set<number>>();
  const ownOf = new Set<number>();
  const foldedOf = new Map<number, number | null>();
  for (const c of calls) {
    let e = edgesOf.get(c.client);
    if (!e) edgesOf.set(c.client, (e = new Set()));
    e.add(c.edge);
    if (c.own) ownOf.add(c.client);
    foldedOf.set(c.client, known.get(c.client) ?? c.foldedInto);
  }
  const out: FoldDecisions = { fold: new Map(), refuse: new Set(), unfoldInto: new Set() };
  for (const [client, edges] of edgesOf) {
    const folded = foldedOf.get(client) ?? null;
    if (ownOf.has(client)) {
      // The edge's own client view; spans of other edges in it came from a folded series.
      if (edges.size > 1) out.unfoldInto.add(client);
      continue;
    }
    if (folded === 0) continue;
    const [only] = edges;
    if (edges.size > 1 || (folded !== null && folded !== only)) out.refuse.add(client);
    else if (folded === null && only !== client) out.fold.set(client, only!);
  }
  return out;
}
