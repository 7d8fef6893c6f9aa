import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from '@onset/testkit';
import { freePort, startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.ts';

let dir: string;
let db: EmbeddedDatabase | undefined;
let server: TestServer | undefined;

afterAll(async () => {
  await server?.close().catch(() => {});
  await db?.stop().catch(() => {});
  if (dir) await rm(dir, { recursive: true, force: true });
});

function batch(spanIds: string[]) {
  const start = BigInt(Date.now() - 30_000) * 1_000_000n;
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'outage' } }] },
        scopeSpans: [
          {
            spans: spanIds.map((spanId) => ({
              traceId: '11112222333344445555666677778888',
              spanId,
              name: 'fsync',
              startTimeUnixNano: String(start),
              endTimeUnixNano: String(start + 3_000_000n),
            })),
          },
        ],
      },
    ],
  });
}

const send = (body: string) =>
  fetch(`${server!.otlpUrl}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('PostgreSQL unreachable', () => {
  it('answers 503 with Retry-After, and nothing is half-written once the database is back', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'onset-outage-'));
    await chmod(dir, 0o755);
    const port = await freePort();
    const dataDir = path.join(dir, 'data');
    db = await startEmbeddedPostgres({ dataDir, port });
    await db.createDatabase('onset');
    server = await startTestServer({ databaseUrl: db.url('onset') });

    expect((await send(batch(['0000000000000001']))).status).toBe(200);

    await db.stop();
    db = undefined;
    const down = await send(batch(['0000000000000002', '0000000000000003']));
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await down.json()).toMatchObject({ error: 'unavailable' });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    db = await startEmbeddedPostgres({ dataDir, port });
    // The exporter retries the same batch after Retry-After: it is stored exactly once.
    let retried = await send(batch(['0000000000000002', '0000000000000003']));
    for (let i = 0; i < 10 && retried.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 300));
      retried = await send(batch(['0000000000000002', '0000000000000003']));
    }
    expect(retried.status).toBe(200);
    const { rows } = await server.onset.pool.query(
      `SELECT count(*)::int AS spans, (SELECT sum(count)::int FROM histograms) AS counted FROM observations`,
    );
    expect(rows[0]).toEqual({ spans: 3, counted: 3 });
  });
});
