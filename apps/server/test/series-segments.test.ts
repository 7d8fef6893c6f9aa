/**
 * GET /api/v1/series/{id}/segments on a real server (docs/api.md "Series",
 * docs/detection.md "Retrospective segmentation"): a real series too short
 * for the streaming test — TCPD's centralia, 15 values, a ×0.03 collapse at
 * the 13th (packages/core/test/fixtures/tcpd-segments.json) — sent as one
 * span a minute through OTLP gets a verdict: the collapse, dated to its
 * minute, as a step down (an improvement, never paged).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SegmentsResponse, SeriesList } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Batch, post } from '@onset/testkit/incidents';

const fixture = JSON.parse(
  readFileSync(
    new URL('../../../packages/core/test/fixtures/tcpd-segments.json', import.meta.url),
    'utf8',
  ),
) as { series: Record<string, { values: number[] }> };
const MIN = 60_000;

let srv: TestServer;
let id: string;
let t0: number;

beforeAll(async () => {
  srv = await startTestServer();
  const values = fixture.series.centralia!.values;
  t0 = Math.floor(Date.now() / MIN) * MIN - (values.length + 2) * MIN;
  const b = new Batch();
  values.forEach((v, i) =>
    b.span(
      { 'service.name': 'centralia' },
      'GET /population',
      'server',
      t0 + i * MIN + 1000,
      v,
      {},
    ),
  );
  await post(`${srv.otlpUrl}/v1/traces`, b.body());
  const list = (await (
    await fetch(`${srv.url}/api/v1/series?service=centralia`)
  ).json()) as SeriesList;
  id = list.series[0]!.id;
}, 120_000);

afterAll(async () => {
  await srv?.close();
});

const segments = (query: string) => fetch(`${srv.url}/api/v1/series/${id}/segments${query}`);

describe('GET /api/v1/series/{id}/segments', () => {
  it('gives a 15-minute series a verdict: the collapse at its 13th minute, a step down', async () => {
    const res = await segments('?from=now-1h');
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as SegmentsResponse;
    expect(body.points).toBe(15);
    expect(body.changes).toHaveLength(1);
    const c = body.changes[0]!;
    expect(c).toMatchObject({
      onset: new Date(t0 + 12 * MIN).toISOString(),
      direction: 'improvement',
      kind: 'step',
    });
    expect(c.ratio).toBeLessThan(0.1);
    expect(c.before_ms).toBeGreaterThan(500);
    expect(c.after_ms).toBeLessThan(100);
    // Two segments per quantile, meeting at the collapse.
    expect(body.segments.p50.map((s) => s.to)).toEqual([
      c.onset,
      new Date(t0 + 15 * MIN).toISOString(),
    ]);
  });

  it('answers 404 for an unknown series and 400 for a window over a day or backwards', async () => {
    expect((await fetch(`${srv.url}/api/v1/series/999999/segments`)).status).toBe(404);
    expect((await segments('?from=now-25h')).status).toBe(400);
    expect((await segments('?from=now&to=now-1h')).status).toBe(400);
  });
});
