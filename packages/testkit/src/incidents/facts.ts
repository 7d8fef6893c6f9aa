/**
 * Incidents 4 and 5 of product.md, described once: who runs where, what
 * changes at the onset, the numbers each call draws, and the change that
 * causes it. Both transports (SDK protobuf replay, OTLP JSON sender) emit
 * exactly this.
 *
 *   4 checkout -> urlite: urlite bumps hyper 0.12.35 -> 0.13.1; its own
 *     latency stays ~0.8 ms, its caller sees +40 ms (Nagle + delayed ACK).
 *   5 containerd: overlay unmounts < 30 ms -> 8-10 s on the hosts moved from
 *     kernel 4.4.0-138 to 4.15.0-36; the others stay fast.
 */
import { within, type SpanSink } from './spans.ts';
import { MIN, type IncidentTimes } from './times.ts';

/** Incident 4: the edge checkout -> urlite GET /lookup, one callee host per caller host. */
export const EDGE = {
  caller: { service: 'checkout', version: '7.2.0' },
  callee: { service: 'urlite', versions: ['1.4.0', '1.5.0'] },
  hyper: ['0.12.35', '0.13.1'],
  tokio: ['0.1.22', '0.2.4'],
  pairs: [
    { caller: 'web-1', callee: 'api-1' },
    { caller: 'web-2', callee: 'api-2' },
  ],
  route: '/lookup',
  bump: { commit: '9f2c1e0', description: 'bump hyper and tokio' },
} as const;

export type EdgePair = (typeof EDGE.pairs)[number];

export const checkoutResource = (host: string): Record<string, string> => ({
  'service.name': EDGE.caller.service,
  'host.name': host,
  'service.version': EDGE.caller.version,
});

const urliteResource = (host: string, after: boolean): Record<string, string> => {
  const i = after ? 1 : 0;
  return {
    'service.name': EDGE.callee.service,
    'host.name': host,
    'service.version': EDGE.callee.versions[i],
    'dependency.hyper': EDGE.hyper[i],
    'dependency.tokio': EDGE.tokio[i],
  };
};

/** Incident 4, one minute on one pair: n calls, each a client span and the callee's server span. */
export function lookupCalls<Ref>(
  sink: SpanSink<Ref>,
  rand: () => number,
  pair: EdgePair,
  minuteMs: number,
  after: boolean,
  n: number,
): void {
  const caller = checkoutResource(pair.caller);
  const callee = urliteResource(pair.callee, after);
  for (let k = 0; k < n; k++) {
    const start = within(rand, minuteMs, k, n);
    const serverMs = 0.7 + rand() * 0.25;
    const netMs = 0.15 + rand() * 0.1;
    const nagleMs = after ? 39.6 + rand() * 0.8 : 0;
    const client = sink.span(caller, 'GET', 'client', start, serverMs + netMs + nagleMs, {
      'http.request.method': 'GET',
      'http.route': EDGE.route,
      'peer.service': EDGE.callee.service,
      'server.address': EDGE.callee.service,
    });
    sink.span(
      callee,
      'GET',
      'server',
      start + netMs / 2,
      serverMs,
      { 'http.request.method': 'GET', 'http.route': EDGE.route },
      client,
    );
  }
}

/** Incident 5: containerd on four nodes; the bumped ones boot the new kernel at the onset. */
export const UNMOUNTS = {
  service: 'containerd',
  hosts: ['node-1', 'node-2', 'node-3', 'node-4'],
  bumped: ['node-3', 'node-4'],
  kernels: ['4.4.0-138', '4.15.0-36'],
  mountpoint: '/run/containerd/overlay/rootfs',
  perMinute: 3,
} as const;

export const containerdResource = (host: string, after: boolean): Record<string, string> => {
  const bumped = after && (UNMOUNTS.bumped as readonly string[]).includes(host);
  return {
    'service.name': UNMOUNTS.service,
    'host.name': host,
    'os.version': UNMOUNTS.kernels[bumped ? 1 : 0],
  };
};

/** Incident 5, one minute on one host: the overlay unmounts. */
export function unmounts<Ref>(
  sink: SpanSink<Ref>,
  rand: () => number,
  host: string,
  minuteMs: number,
  after: boolean,
): void {
  const res = containerdResource(host, after);
  const bumped = res['os.version'] === UNMOUNTS.kernels[1];
  for (let i = 0; i < UNMOUNTS.perMinute; i++) {
    // The duration is drawn before the start (the replay's order of draws).
    const ms = bumped ? 8000 + rand() * 2000 : 14 + rand() * 12;
    const start = within(rand, minuteMs, i, UNMOUNTS.perMinute);
    sink.span(res, 'unmount', 'internal', start, ms, {
      'fs.mountpoint': UNMOUNTS.mountpoint,
      'fs.type': 'overlay',
    });
  }
}

/** The changes that cause incidents 4 and 5, as POST /api/v1/deploys bodies. */
export function causeMarkers(t: IncidentTimes): {
  urliteHyper: Record<string, unknown>;
  kernelRollout: Record<string, unknown>;
} {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    urliteHyper: {
      service: EDGE.callee.service,
      hosts: EDGE.pairs.map((p) => p.callee),
      kind: 'dependency',
      component: 'hyper',
      from_version: EDGE.hyper[0],
      to_version: EDGE.hyper[1],
      commit: EDGE.bump.commit,
      description: EDGE.bump.description,
      at: iso(t.onsetMs - MIN),
    },
    kernelRollout: {
      hosts: [...UNMOUNTS.bumped],
      kind: 'kernel',
      component: 'kernel',
      from_version: UNMOUNTS.kernels[0],
      to_version: UNMOUNTS.kernels[1],
      at: iso(t.onsetMs - 2 * MIN),
    },
  };
}
