/**
 * Incidents 4 and 5 (facts.ts) as OTLP JSON to /v1/traces and deploy
 * markers through POST /api/v1/deploys, for the browser tests and for
 * looking at the UI: only the public interfaces, no SDK.
 */
import { randomBytes } from 'node:crypto';
import { mulberry32 } from '../random.ts';
import { causeMarkers, EDGE, lookupCalls, UNMOUNTS, unmounts } from './facts.ts';
import type { Attrs, Kind, SpanSink } from './spans.ts';
import { incidentTimes, LIVE_WINDOW, MIN, type IncidentTimes } from './times.ts';

/** The hyper bump's description as a CI job might send it: HTML that must render as text. */
export const XSS_DESCRIPTION = `${EDGE.bump.description} <img src=x onerror=alert(1)>`;

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: { stringValue: string } | { intValue: string } }>;
}

/** OTLP SpanKind numbers (the JSON encoding's enum, not the JS API's). */
const KINDS: Record<Kind, number> = { internal: 1, server: 2, client: 3 };

const attrs = (o: Attrs) =>
  Object.entries(o).map(([key, v]) => ({
    key,
    value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v },
  }));

const nanos = (ms: number) => (BigInt(Math.round(ms * 1000)) * 1000n).toString();
const hex = (n: number) => randomBytes(n).toString('hex');

/** Spans grouped by resource, as one ExportTraceServiceRequest. */
export class Batch implements SpanSink<{ traceId: string; spanId: string }> {
  private readonly byResource = new Map<
    string,
    { resource: Record<string, string>; spans: JsonSpan[] }
  >();
  size = 0;
  span(
    resource: Record<string, string>,
    name: string,
    kind: Kind,
    startMs: number,
    durationMs: number,
    attributes: Attrs,
    parent?: { traceId: string; spanId: string },
  ): { traceId: string; spanId: string } {
    const key = JSON.stringify(resource);
    let r = this.byResource.get(key);
    if (!r) this.byResource.set(key, (r = { resource, spans: [] }));
    const ref = { traceId: parent?.traceId ?? hex(16), spanId: hex(8) };
    r.spans.push({
      ...ref,
      ...(parent ? { parentSpanId: parent.spanId } : {}),
      name,
      kind: KINDS[kind],
      startTimeUnixNano: nanos(startMs),
      endTimeUnixNano: nanos(startMs + durationMs),
      attributes: attrs(attributes),
    });
    this.size++;
    return ref;
  }
  body(): unknown {
    return {
      resourceSpans: [...this.byResource.values()].map((r) => ({
        resource: { attributes: attrs(r.resource) },
        scopeSpans: [{ scope: { name: 'onset-e2e-fixture' }, spans: r.spans }],
      })),
    };
  }
}

export async function post(url: string, body: unknown, token?: string): Promise<Response> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${url} → ${res.status}: ${await res.text()}`);
  return res;
}

export interface SendOptions {
  otlpUrl: string;
  apiUrl: string;
  /** Default: LIVE_WINDOW ending at the current minute. */
  times?: IncidentTimes;
  token?: string;
  /** Calls per minute from each checkout host (each a client and a server span). */
  callsPerMinute?: number;
}

/** Send incidents 4 and 5 (traces, causes and two unrelated markers). Returns the times used. */
export async function sendIncidents(o: SendOptions): Promise<IncidentTimes> {
  const t = o.times ?? incidentTimes(Date.now(), LIVE_WINDOW);
  const perMinute = o.callsPerMinute ?? 20;
  const rand = mulberry32(42);
  let batch = new Batch();
  const flush = async () => {
    if (!batch.size) return;
    await post(`${o.otlpUrl}/v1/traces`, batch.body(), o.token);
    batch = new Batch();
  };

  for (let minute = t.fromMs; minute < t.endMs; minute += MIN) {
    const after = minute >= t.onsetMs;
    for (const pair of EDGE.pairs) lookupCalls(batch, rand, pair, minute, after, perMinute);
    for (const host of UNMOUNTS.hosts) unmounts(batch, rand, host, minute, after);
    if (batch.size >= 3000) await flush();
  }
  await flush();

  const iso = (ms: number) => new Date(ms).toISOString();
  const cause = causeMarkers(t);
  const deploys = [
    {
      service: EDGE.caller.service,
      kind: 'code',
      commit: '4be1d2a',
      description: 'checkout: new basket layout',
      url: 'https://ci.example/run/870',
      at: iso(t.onsetMs - 95 * MIN),
    },
    {
      service: EDGE.callee.service,
      kind: 'config',
      description: 'raise worker pool to 64',
      at: iso(t.onsetMs - 40 * MIN),
    },
    { ...cause.urliteHyper, url: 'https://ci.example/run/881', description: XSS_DESCRIPTION },
    {
      ...cause.kernelRollout,
      url: 'https://ci.example/kernel/4.15',
      description: 'kernel rollout, wave 1',
    },
  ];
  for (const d of deploys)
    await post(`${o.apiUrl}/api/v1/deploys`, { environment: 'prod', ...d }, o.token);
  return t;
}
