/**
 * GET /api/v1/regressions/{id}/evidence through a real server on embedded
 * PostgreSQL, after replaying evidence-incidents.ts with the official OTel SDK
 * and running detection: hints, attribute lifts and exemplars per incident.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import type { Evidence, Regression, Trace } from '@onset/contract';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { evidenceTimes, replayEvidenceIncidents } from './fixtures/evidence-incidents.ts';

const READ = 'tok-read-evidence';
const ADMIN = 'tok-admin-evidence';
const INGEST = 'tok-ingest-evidence';
const auth = (token = READ) => ({ authorization: `Bearer ${token}` });
const TEMPLATE = 'http://jaeger.example:16686/trace/{trace_id}?uiFind={span_id}';
const times = evidenceTimes();
let s: TestServer;
let all: Regression[] = [];

async function evidence(r: Regression): Promise<Evidence> {
  const res = await fetch(`${s.url}/api/v1/regressions/${r.id}/evidence`, { headers: auth() });
  expect(res.status).toBe(200);
  return (await res.json()) as Evidence;
}

const find = (service: string, view?: string) => {
  const found = all.filter((r) => r.service === service && (view === undefined || r.view === view));
  expect(found.map((r) => `${r.service} ${r.op} ${r.view} ${r.name} ${r.peer}`)).toHaveLength(1);
  return found[0]!;
};

beforeAll(async () => {
  s = await startTestServer({
    env: {
      ONSET_TRACE_URL_TEMPLATE: TEMPLATE,
      ONSET_TOKENS: `read:${READ},admin:${ADMIN},ingest:${INGEST}`,
    },
  });
  await replayEvidenceIncidents(s.otlpUrl, times, auth(INGEST));
  const res = await fetch(`${s.url}/api/v1/detect`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(ADMIN) },
    body: JSON.stringify({ upto: new Date(times.endMs).toISOString() }),
  });
  expect(res.status).toBe(200);
  const list = await fetch(`${s.url}/api/v1/regressions`, { headers: auth() });
  all = ((await list.json()) as { regressions: Regression[] }).regressions;
}, 180_000);

afterAll(async () => {
  await s?.close();
});

describe('evidence hints', () => {
  it('a flat +40 ms only the caller sees is tcp-delayed-ack (≥ 0.8), never tcp-min-rto', async () => {
    const views = all.filter((r) => r.service === 'shop' && r.peer === 'pricing');
    expect(views.map((r) => r.view).sort()).toEqual(expect.arrayContaining(['gap']));
    for (const r of views) {
      const e = await evidence(r);
      const ack = e.hints.find((h) => h.id === 'tcp-delayed-ack');
      expect(ack, `${r.view}: ${JSON.stringify(e.hints)}`).toBeDefined();
      expect(ack!.confidence).toBeGreaterThanOrEqual(0.8);
      expect(ack!.detail).toMatch(/\+(39|40)\.\d ms/);
      expect(e.hints.map((h) => h.id)).not.toContain('tcp-min-rto');
    }
    // The callee's library bump is on the caller's regression, as the peer's resource attribute.
    const gap = await evidence(find('shop', 'gap'));
    expect(gap.attributes[0]).toMatchObject({
      key: 'peer.dependency.hyper',
      value: '0.13.1',
      share_before: 0,
    });
    // The callee's own server series did not move.
    expect(all.filter((r) => r.service === 'pricing')).toEqual([]);
  });

  it('spawns that pay per open fd yield spawn-fd-count and a lift on the fd attribute', async () => {
    const r = find('worker');
    expect(r).toMatchObject({ op: 'spawn', name: 'git' });
    const e = await evidence(r);
    expect(e.hints[0]?.id).toBe('spawn-fd-count');
    expect(e.hints[0]!.detail).toMatch(/onset\.parent\.fd_count/);
    expect(e.hints.map((h) => h.id)).not.toContain('fork-parent-rss');
    const fd = e.attributes.find((a) => a.key === 'onset.parent.fd_count');
    expect(fd).toMatchObject({ value: '2048–4095', share_before: 0 });
    expect(fd!.share_after).toBeGreaterThan(0.5);
  });

  it('unmounts slow on the kernel-bumped hosts put os.version at the top of the attributes', async () => {
    const r = find('mounter');
    const e = await evidence(r);
    expect(e.attributes[0]).toMatchObject({
      key: 'os.version',
      value: '4.15.0-36',
      share_before: 0,
    });
    expect(e.attributes[0]!.share_after).toBeGreaterThan(0.8);
    expect(e.attributes[0]!.count_after).toBeGreaterThan(50);
  });

  it('a ×3 callee slowdown (+40 ms at the median) gets no TCP hint on any view', async () => {
    const control = all.filter((r) => r.service === 'front' || r.service === 'catalog');
    expect(control.length).toBeGreaterThan(0);
    expect(control.some((r) => r.view === 'client' || r.view === 'server')).toBe(true);
    for (const r of control) {
      const e = await evidence(r);
      expect(e.exemplars.after.length, `${r.service} ${r.view}`).toBeGreaterThan(0);
      expect(e.hints.filter((h) => h.id.startsWith('tcp-') || h.id === 'dns-timeout')).toEqual([]);
    }
  });
});

describe('hints beyond the evidence endpoint', () => {
  it('list items carry the hints detection stored, and the alert text names the top one', async () => {
    const gap = find('shop', 'gap');
    expect(gap.hints[0]).toMatchObject({ id: 'tcp-delayed-ack' });
    expect(gap.hints[0]!.confidence).toBeGreaterThanOrEqual(0.8);
    expect(find('mounter').hints).toEqual([]);
    for (const r of all.filter((x) => x.service === 'front' || x.service === 'catalog'))
      expect(r.hints.filter((h) => h.id.startsWith('tcp-'))).toEqual([]);
    const res = await fetch(`${s.url}/api/v1/alerts?regression_id=${gap.id}`, { headers: auth() });
    expect(res.status).toBe(200);
    const alerts = (
      (await res.json()) as { alerts: Array<{ title: string; regression_id: string | null }> }
    ).alerts;
    const mine = alerts.filter((a) => a.regression_id === gap.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.title).toMatch(
      /likely: Nagle’s algorithm waiting for a delayed ACK \(confidence 0\.\d\d\)$/,
    );
  });
});

describe('exemplars', () => {
  it('are well-formed, slower after than before, and link to the trace viewer', async () => {
    for (const r of [find('worker'), find('mounter'), find('shop', 'gap')]) {
      const e = await evidence(r);
      expect(e.exemplars.before.length).toBeGreaterThanOrEqual(3);
      expect(e.exemplars.after.length).toBeGreaterThanOrEqual(3);
      for (const sp of [...e.exemplars.before, ...e.exemplars.after]) {
        expect(sp.trace_id).toMatch(/^[0-9a-f]{32}$/);
        expect(sp.span_id).toMatch(/^[0-9a-f]{16}$/);
        expect(new Date(sp.start).toISOString()).toBe(sp.start);
        expect(sp.trace_url).toBe(
          `http://jaeger.example:16686/trace/${sp.trace_id}?uiFind=${sp.span_id}`,
        );
        expect(sp.service).toBe(r.service);
      }
      for (const sp of e.exemplars.before)
        expect(Date.parse(sp.start)).toBeLessThan(Date.parse(r.onset));
      for (const sp of e.exemplars.after)
        expect(Date.parse(sp.start)).toBeGreaterThan(Date.parse(r.onset));
      const typical = (side: typeof e.exemplars.before) =>
        side.filter((x) => x.role === 'typical').map((x) => x.duration_ms);
      expect(Math.min(...typical(e.exemplars.after))).toBeGreaterThan(
        Math.max(...typical(e.exemplars.before)),
      );
    }
    // An edge exemplar is the caller's span with the callee's span paired, in the same trace.
    const gap = await evidence(find('shop', 'gap'));
    expect(gap.exemplars.after[0]!.paired).toMatchObject({ service: 'pricing' });
    expect(
      gap.exemplars.after[0]!.duration_ms - gap.exemplars.after[0]!.paired!.duration_ms,
    ).toBeGreaterThan(38);
  });

  it('404 for a regression that does not exist', async () => {
    expect(
      (await fetch(`${s.url}/api/v1/regressions/999999/evidence`, { headers: auth() })).status,
    ).toBe(404);
    expect(
      (await fetch(`${s.url}/api/v1/regressions/x'1/evidence`, { headers: auth() })).status,
    ).toBe(404);
    expect((await fetch(`${s.url}/api/v1/regressions/${all[0]!.id}/evidence`)).status).toBe(401);
  });
});

describe('MCP at /mcp (the SDK’s own client)', () => {
  const connect = async (token?: string) => {
    const client = new Client({ name: 'onset-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
      requestInit: token ? { headers: auth(token) } : {},
    });
    await client.connect(transport);
    return client;
  };

  it('lists the read tools and gets a regression with its evidence using a read token', async () => {
    const client = await connect(READ);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'get_regression',
        'get_trace',
        'list_alerts',
        'list_deploys',
        'list_regressions',
        'list_series',
        'list_slos',
        'query_series_quantiles',
      ]);
      const gap = find('shop', 'gap');
      const listed = await client.callTool({
        name: 'list_regressions',
        arguments: { service: 'shop', view: 'gap' },
      });
      expect(listed.isError).toBeFalsy();
      const regs = (listed.structuredContent as { regressions: Regression[] }).regressions;
      expect(regs.map((r) => r.id)).toEqual([gap.id]);

      const got = await client.callTool({ name: 'get_regression', arguments: { id: gap.id } });
      expect(got.isError).toBeFalsy();
      const body = got.structuredContent as { regression: Regression; evidence: Evidence };
      expect(body.regression).toMatchObject({
        id: gap.id,
        service: 'shop',
        view: 'gap',
        peer: 'pricing',
      });
      expect(body.evidence.hints[0]).toMatchObject({ id: 'tcp-delayed-ack' });
      // The text an assistant reads is the same JSON.
      const text = (got.content as Array<{ type: string; text: string }>)[0]!.text;
      expect(JSON.parse(text)).toEqual(body);

      // An exemplar's trace opens as the API answers it, with that span in it.
      const ex = body.evidence.exemplars.after[0]!;
      const trace = await client.callTool({
        name: 'get_trace',
        arguments: { trace_id: ex.trace_id },
      });
      expect(trace.isError).toBeFalsy();
      const api = await (
        await fetch(`${s.url}/api/v1/traces/${ex.trace_id}`, { headers: auth() })
      ).json();
      expect(trace.structuredContent).toEqual(api);
      expect((api as Trace).spans.map((x) => x.span_id)).toContain(ex.span_id);

      const q = await client.callTool({
        name: 'query_series_quantiles',
        arguments: {
          series_id: gap.series_id,
          from: new Date(times.fromMs).toISOString(),
          to: new Date(times.endMs).toISOString(),
          step: '15m',
        },
      });
      expect(q.isError).toBeFalsy();
      const points = (q.structuredContent as { points: Array<{ q: Record<string, number> }> })
        .points;
      expect(points.length).toBeGreaterThan(5);
      expect(points.at(-1)!.q['0.5']!).toBeGreaterThan(points[0]!.q['0.5']! + 30);

      const missing = await client.callTool({
        name: 'get_regression',
        arguments: { id: '999999' },
      });
      expect(missing.isError).toBe(true);
      expect((missing.content as Array<{ text: string }>)[0]!.text).toMatch(/404/);
      const slos = await client.callTool({ name: 'list_slos', arguments: {} });
      expect(slos.structuredContent).toEqual({ slos: [] });
    } finally {
      await client.close();
    }
  });

  it('answers 401 without a token, and the client fails to connect', async () => {
    const res = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    await expect(connect()).rejects.toThrow(/401|Unauthorized/i);
    await expect(connect('not-a-token')).rejects.toThrow(/401|403|Unauthorized|Forbidden/i);
  });
});
