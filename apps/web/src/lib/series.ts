/** Relations between series and markers: the three views of an edge, the deploys that could touch a series. Pure. */
import type { Deploy, Series } from '../api/types.ts';

/** The three views of one edge: the client and gap series of caller→callee and the callee's server series. */
export function edgeSeries(
  all: readonly Series[],
  x: { service: string; name: string; peer?: string | null; view?: string; op?: string },
): { client: Series | null; server: Series | null; gap: Series | null; caller: string | null; callee: string | null } {
  const sameName = all.filter((s) => s.name === x.name && (!x.op || s.op === x.op));
  let caller: string | null = null;
  let callee: string | null = null;
  if (x.view === 'server') {
    callee = x.service;
    const client = sameName.find((s) => s.view === 'client' && s.peer === x.service) ?? sameName.find((s) => s.view === 'gap' && s.peer === x.service);
    caller = client?.service ?? null;
  } else {
    caller = x.service;
    callee = x.peer ?? null;
  }
  const pick = (view: string) =>
    sameName.find((s) => s.view === view && s.service === caller && (callee === null || s.peer === callee)) ??
    // Tolerate a gap series registered under the callee (service=callee, peer=caller).
    (view === 'gap' ? sameName.find((s) => s.view === 'gap' && s.service === callee && s.peer === caller) : undefined) ??
    null;
  const server = callee ? (sameName.find((s) => s.view === 'server' && s.service === callee) ?? null) : null;
  return { client: pick('client'), server, gap: pick('gap'), caller, callee };
}

/**
 * Deploy markers that can explain a change in this series: the service's own
 * releases, its callee's (for client and gap views), and host-level changes
 * (kernel bumps) on any host that reports the series.
 */
export function relevantDeploys(deploys: readonly Deploy[], s: Pick<Series, 'service' | 'peer' | 'hosts'>): Deploy[] {
  const hosts = new Set(s.hosts);
  return deploys.filter((d) => {
    if (d.service && (d.service === s.service || (s.peer && d.service === s.peer))) return true;
    if (d.hosts && d.hosts.some((h) => hosts.has(h))) return !d.service || d.service === s.service || d.service === s.peer;
    return !d.service && !(d.hosts && d.hosts.length);
  });
}
