/**
 * A deploy and the calls around it, for verdict tests (docs/verdicts.md):
 * one service's server spans, as OTLP JSON, over `beforeMin` minutes before
 * the marker and `afterMin` after it, backfilled (the marker is in the past,
 * so its judged window is already over and the verdict is decided at once),
 * then the marker itself through POST /api/v1/deploys. Public interfaces only.
 */
import type { Deploy } from '@onset/contract';
import { mulberry32Open } from './random.ts';
import { Batch, post } from './incidents/otlp-json.ts';

const MIN = 60_000;

export interface DeployTraffic {
  apiUrl: string;
  otlpUrl: string;
  /** Needs the ingest and deploys scopes where the server has tokens. */
  token?: string;
  service: string;
  /** The marker's time, whole minutes in the past (at least afterMin + 2 minutes ago). */
  atMs: number;
  beforeMin?: number;
  afterMin?: number;
  /** Calls a minute on each side of the marker (default 60). */
  callsPerMinute?: number;
  /** Calls a minute after the marker (default callsPerMinute). */
  callsPerMinuteAfter?: number;
  /** Median latency before the marker, ms (default 20). */
  medianMs?: number;
  /** After the marker, every call takes this many times as long (default 1: no change). */
  slowdown?: number;
  route?: string;
  seed?: number;
}

/** Send the calls, then the marker; returns the stored marker. */
export async function sendDeployTraffic(o: DeployTraffic): Promise<Deploy> {
  const before = o.beforeMin ?? 30;
  const after = o.afterMin ?? 10;
  const route = o.route ?? 'GET /cart';
  const median = o.medianMs ?? 20;
  const rand = mulberry32Open(o.seed ?? 7);
  // Lognormal latencies (sigma 0.3) from Box-Muller: a spread like real request times.
  const latency = () =>
    median * Math.exp(0.3 * Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand()));
  const resource = { 'service.name': o.service, 'host.name': `${o.service}-1` };
  let batch = new Batch();
  for (let m = o.atMs - before * MIN; m < o.atMs + after * MIN; m += MIN) {
    const isAfter = m >= o.atMs;
    const n = isAfter
      ? (o.callsPerMinuteAfter ?? o.callsPerMinute ?? 60)
      : (o.callsPerMinute ?? 60);
    for (let i = 0; i < n; i++)
      batch.span(
        resource,
        route,
        'server',
        m + ((i + rand()) * MIN) / n - 1,
        latency() * (isAfter ? (o.slowdown ?? 1) : 1),
        { 'http.request.method': route.split(' ')[0]!, 'http.route': route.split(' ')[1] ?? '/' },
      );
    if (batch.size >= 3000) {
      await post(`${o.otlpUrl}/v1/traces`, batch.body(), o.token);
      batch = new Batch();
    }
  }
  if (batch.size) await post(`${o.otlpUrl}/v1/traces`, batch.body(), o.token);
  const res = await post(
    `${o.apiUrl}/api/v1/deploys`,
    {
      service: o.service,
      environment: 'prod',
      kind: 'code',
      to_version: `${o.service}-v2`,
      at: new Date(o.atMs).toISOString(),
    },
    o.token,
  );
  return (await res.json()) as Deploy;
}
