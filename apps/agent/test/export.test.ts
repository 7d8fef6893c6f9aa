/**
 * Delivery behaviour a user relies on, against a real Onset server behind a
 * loopback proxy that can play an overloaded or vanished collector:
 * retries on 503 honouring Retry-After, a bounded queue that drops the
 * oldest spans (counted and logged) while the collector is gone, and a
 * shutdown that flushes what is queued.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { SpawnEvent } from '../src/events.ts';
import { startTestAgent, type TestAgent } from './helpers/agent.ts';
import { listSeries, waitForSeries } from './helpers/onset.ts';

let server: TestServer;
let proxy: Server;
let proxyUrl: string;
/** How the proxy answers the next requests. */
let mode: { failNext: number; retryAfter?: string } | 'down' | 'forward' = 'forward';
const seen: { at: number; status: number }[] = [];
const agents: TestAgent[] = [];

function forward(
  req: import('node:http').IncomingMessage,
  res: import('node:http').ServerResponse,
): void {
  const upstream = new URL(req.url!, server.otlpUrl);
  const out = request(upstream, { method: req.method, headers: req.headers }, (up) => {
    seen.push({ at: Date.now(), status: up.statusCode! });
    res.writeHead(up.statusCode!, up.headers);
    up.pipe(res);
  });
  req.pipe(out);
}

beforeAll(async () => {
  server = await startTestServer();
  proxy = createServer((req, res) => {
    if (mode === 'forward') return forward(req, res);
    if (typeof mode === 'object' && mode.failNext <= 0) return forward(req, res);
    req.resume();
    if (typeof mode === 'object') mode.failNext--;
    seen.push({ at: Date.now(), status: 503 });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (typeof mode === 'object' && mode.retryAfter) headers['retry-after'] = mode.retryAfter;
    res.writeHead(503, headers).end('{"error":"unavailable"}');
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
  mode = 'forward';
  seen.length = 0;
});

afterAll(async () => {
  await new Promise((r) => proxy?.close(r));
  await server?.close();
});

function spawnEvent(label: string): SpawnEvent {
  return {
    kind: 'spawn',
    source: 'probe',
    label,
    executable: '/bin/true',
    startNs: BigInt(Date.now()) * 1_000_000n,
    durationNs: 1_000_000,
  };
}

async function agentFor(
  service: string,
  tune: (c: import('../src/config/schema.ts').AgentConfig) => void = () => {},
): Promise<TestAgent> {
  const ta = await startTestAgent({
    flags: { endpoint: proxyUrl, serviceName: service, bpftrace: false, strace: false },
    tune,
  });
  agents.push(ta);
  return ta;
}

describe('export', () => {
  it('retries a 503 after the Retry-After delay and delivers the batch', async () => {
    mode = { failNext: 2, retryAfter: '1' };
    const ta = await agentFor('export-retry');
    for (let i = 0; i < 5; i++) ta.agent.record(spawnEvent('retry-me'));
    await ta.agent.flush();

    expect(seen.map((s) => s.status)).toEqual([503, 503, 200]);
    // The exporter waited as told (1 s) between attempts, instead of hammering the collector.
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(900);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(900);
    expect(ta.agent.stats).toMatchObject({ exported: 5, dropped: 0, queued: 0 });
    await waitForSeries(
      server.url,
      { service: 'export-retry', op: 'spawn' },
      (s) => s.name === 'retry-me',
      5,
    );
  });

  it('keeps the newest spans within the queue cap while the collector is gone, counts and logs the drops, then delivers', async () => {
    mode = 'down';
    const ta = await agentFor('export-drop', (c) => {
      c.export.maxQueueSpans = 20;
      c.export.timeoutMs = 1_000;
      c.export.flushIntervalMs = 100;
    });
    for (let i = 0; i < 10; i++) ta.agent.record(spawnEvent(`drop-${i}`));
    await ta.waitFor('a failed export', () => ta.agent.stats.failedExports > 0);
    expect(ta.logs.join('\n')).toMatch(/cannot deliver spans to .* keeping up to 20 spans/);
    for (let i = 10; i < 50; i++) ta.agent.record(spawnEvent(`drop-${i}`));

    expect(ta.agent.stats.dropped).toBe(30);
    expect(ta.logs.join('\n')).toMatch(
      /span queue full \(20 spans \/ 32 MiB\): dropped \d+ oldest spans/,
    );

    mode = 'forward';
    await ta.waitFor('the queue to drain', () => ta.agent.stats.exported === 20, 20_000);
    expect(ta.logs.join('\n')).toMatch(/is reachable again after \d+s/);
    await waitForSeries(
      server.url,
      { service: 'export-drop', op: 'spawn' },
      (s) => s.name === 'drop-49',
      1,
    );
    const names = new Set(
      (await listSeries(server.url, { service: 'export-drop' })).map((s) => s.name),
    );
    // The 20 newest arrived; the 30 oldest were the ones dropped.
    for (let i = 30; i < 50; i++) expect(names.has(`drop-${i}`), `drop-${i}`).toBe(true);
    for (let i = 0; i < 30; i++) expect(names.has(`drop-${i}`), `drop-${i}`).toBe(false);
    await ta.stop();
    expect(ta.logs.join('\n')).toMatch(/dropped 30 spans in total because the queue was full/);
  });

  it('flushes queued spans on shutdown', async () => {
    const ta = await agentFor('export-shutdown', (c) => {
      c.export.flushIntervalMs = 600_000; // nothing goes out on its own
      c.export.batchSize = 10_000;
    });
    for (let i = 0; i < 7; i++) ta.agent.record(spawnEvent('on-shutdown'));
    await new Promise((r) => setTimeout(r, 300));
    expect(seen).toHaveLength(0);
    await ta.stop();
    expect(ta.logs.join('\n')).toMatch(/flushed; 7 spans delivered/);
    await waitForSeries(
      server.url,
      { service: 'export-shutdown', op: 'spawn' },
      (s) => s.name === 'on-shutdown',
      7,
    );
  });
});
