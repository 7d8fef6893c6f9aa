/** Shared helpers for the SLO / alert / webhook tests: OTLP senders and real HTTP receivers on loopback. */
import { expect } from 'vitest';
import http from 'node:http';
import { createHmac, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { allowLoopbackWebhooks } from '@onset/testkit';

export const MIN = 60_000;

export interface SpanSpec {
  startMs: number;
  durationUs: number;
  service?: string;
  /** Span name; "spawn" makes op=spawn. */
  spanName?: string;
  executable?: string;
  host?: string;
  kind?: number;
}

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** POST spans as OTLP JSON (one request per 2,000 spans); resolves after the server committed them. */
export async function sendSpans(
  otlpUrl: string,
  spans: SpanSpec[],
  headers: Record<string, string> = {},
): Promise<void> {
  for (let i = 0; i < spans.length; i += 2000) {
    const groups = new Map<string, SpanSpec[]>();
    for (const s of spans.slice(i, i + 2000)) {
      const key = `${s.service ?? 'pageserver'}|${s.host ?? 'node-1'}`;
      (groups.get(key) ?? groups.set(key, []).get(key)!).push(s);
    }
    const body = {
      resourceSpans: [...groups.entries()].map(([key, list]) => {
        const [service, host] = key.split('|') as [string, string];
        return {
          resource: { attributes: [str('service.name', service), str('host.name', host)] },
          scopeSpans: [
            {
              spans: list.map((s) => {
                const start = BigInt(Math.round(s.startMs)) * 1_000_000n;
                const end = start + BigInt(Math.round(s.durationUs * 1000));
                return {
                  traceId: randomBytes(16).toString('hex'),
                  spanId: randomBytes(8).toString('hex'),
                  name: s.spanName ?? 'spawn',
                  kind: s.kind ?? 1,
                  startTimeUnixNano: start.toString(),
                  endTimeUnixNano: end.toString(),
                  attributes:
                    s.executable === undefined && (s.spanName ?? 'spawn') !== 'spawn'
                      ? []
                      : [str('process.executable.name', s.executable ?? 'postgres')],
                };
              }),
            },
          ],
        };
      }),
    };
    const res = await fetch(`${otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    if (res.status !== 200)
      throw new Error(`OTLP ingest answered ${res.status}: ${await res.text()}`);
    const out = (await res.json()) as {
      partialSuccess?: { rejectedSpans?: string | number; errorMessage?: string };
    };
    if (Number(out.partialSuccess?.rejectedSpans ?? 0) > 0)
      throw new Error(`spans rejected: ${out.partialSuccess?.errorMessage}`);
  }
}

/** `perMinute` spans in each minute of [fromMs, toMs), each `durationUs` long. */
export function traffic(
  fromMs: number,
  toMs: number,
  perMinute: number,
  durationUs: number,
  extra: Partial<SpanSpec> = {},
): SpanSpec[] {
  const out: SpanSpec[] = [];
  for (let m = fromMs; m < toMs; m += MIN)
    for (let k = 0; k < perMinute; k++)
      out.push({ startMs: m + Math.floor(((k + 0.5) * MIN) / perMinute), durationUs, ...extra });
  return out;
}

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  json: any;
  /** What the receiver answered. */
  status: number;
  /** When it arrived (epoch ms). */
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Answer with this status (and optional headers) from now on. */
  respond: (status: number, headers?: Record<string, string>) => void;
  close: () => Promise<void>;
}

/**
 * A real HTTP server on loopback recording every request (optionally on a given port).
 * Loopback is outside the default webhook egress policy: this permits it for the test's process.
 */
export async function startReceiver(port = 0): Promise<Receiver> {
  allowLoopbackWebhooks();
  let status = 200;
  let extraHeaders: Record<string, string> = {};
  const requests: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(raw);
      } catch {
        /* keep raw */
      }
      requests.push({
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        raw,
        json,
        status,
        at: Date.now(),
      });
      res.writeHead(status, { 'content-type': 'text/plain', ...extraHeaders });
      res.end(status < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const p = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${p}/hook`,
    port: p,
    requests,
    respond: (s, h = {}) => {
      status = s;
      extraHeaders = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a receiver does to check X-Onset-Signature. */
export function signatureValid(r: Received, secret: string): boolean {
  const expected = `sha256=${createHmac('sha256', secret).update(r.raw).digest('hex')}`;
  return r.headers['x-onset-signature'] === expected;
}

/** The dedup key of a received notification, whatever its format. */
export function dedupKeyOf(r: Received): string {
  const j = r.json;
  return j.dedup_key ?? j.alerts?.[0]?.labels?.dedup_key ?? r.headers['x-onset-dedup-key'];
}

export function api(base: string, token?: string) {
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ) => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = contentType;
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    return { status: res.status, body: json, text };
  };
  return {
    get: (p: string) => call('GET', p),
    post: (p: string, b?: unknown, ct?: string) => call('POST', p, b ?? {}, ct),
    put: (p: string, b: unknown, ct?: string) => call('PUT', p, b, ct),
    del: (p: string) => call('DELETE', p),
  };
}

/** Each test owns its webhooks: switch off the ones earlier tests made, then create this one. */
export async function onlyWebhook(
  A: ReturnType<typeof api>,
  body: Record<string, unknown>,
): Promise<string> {
  for (const w of (await A.get('/api/v1/webhooks')).body.webhooks)
    await A.put(`/api/v1/webhooks/${w.id}`, { enabled: false });
  const r = await A.post('/api/v1/webhooks', body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}
