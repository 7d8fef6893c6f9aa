/**
 * Onset tracing itself into itself (OTEL_EXPORTER_OTLP_ENDPOINT = its own
 * OTLP port, as a Collector that forwards back to Onset amounts to): its own
 * spans are stored, but ingesting them is not traced, so an idle server
 * exports nothing more; ingest of anyone else's spans still is traced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { freePort } from '../src/db/embedded.ts';

const SELF = 'onset-self-loop';
let srv: TestServer;

beforeAll(async () => {
  const otlpPort = await freePort();
  process.env.ONSET_SELF_TRACING = 'on';
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${otlpPort}`;
  process.env.OTEL_SERVICE_NAME = SELF;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
  srv = await startTestServer({ env: { ONSET_OTLP_PORT: String(otlpPort) } });
});
afterAll(async () => {
  await srv?.close();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.ONSET_SELF_TRACING;
});

/** Spans stored per series name for `service`. */
async function spansByName(service: string): Promise<Record<string, number>> {
  const { rows } = await srv.onset.pool.query<{ name: string; n: string }>(
    `SELECT s.name, count(*) AS n FROM observations o JOIN series s ON s.id = o.series_id
      WHERE s.service = $1 GROUP BY s.name`,
    [service],
  );
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.n)]));
}

async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('no loop when Onset receives its own spans', () => {
  it('its requests are stored; the ingest of its own export is not traced; idle stays idle', async () => {
    expect((await fetch(`${srv.url}/api/v1/series?service=nobody`)).status).toBe(200);
    await until(async () => (await spansByName(SELF))['GET /api/v1/series'] === 1);
    // Several export intervals later: nothing else arrived, in particular no
    // "POST /v1/traces" span for the export that carried the one above.
    await sleep(1500);
    const settled = await spansByName(SELF);
    expect(settled).toEqual({ 'GET /api/v1/series': 1, 'handler GET /api/v1/series': 1 });
    await sleep(1000);
    expect(await spansByName(SELF)).toEqual(settled);
  });

  it("ingest of another service's spans is traced, once", async () => {
    const now = BigInt(Date.now()) * 1_000_000n;
    const res = await fetch(`${srv.otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'shop' } }] },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: '5b8efff798038103d269b633813fc60c',
                    spanId: 'eee19b7ec3c1b174',
                    name: 'GET /cart',
                    kind: 2,
                    startTimeUnixNano: String(now - 5_000_000n),
                    endTimeUnixNano: String(now),
                  },
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(res.status).toBe(200);
    await until(async () => (await spansByName(SELF))['POST /v1/traces'] === 1);
    await sleep(1500);
    expect(await spansByName(SELF)).toEqual({
      'GET /api/v1/series': 1,
      'handler GET /api/v1/series': 1,
      'POST /v1/traces': 1,
      'handler POST /v1/traces': 1,
    });
    expect(await spansByName('shop')).toEqual({ 'GET /cart': 1 });
  });
});
