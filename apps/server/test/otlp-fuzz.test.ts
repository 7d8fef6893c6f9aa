import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { runOtlpFuzz } from '@onset/testkit/otlp-fuzz';

/**
 * 10,000 mutated OTLP bodies (traces and metrics, JSON and protobuf; see
 * packages/testkit/src/otlp-fuzz.ts) from a fixed seed: no 5xx, no value that
 * only PostgreSQL refused, the server healthy and its memory bounded after.
 * bench/fuzz runs 100,000 against a server process.
 */
const SEED = 19;
const BODIES = 10_000;
/** Growth of this process's RSS (server and client) over the run; bodies are at most a few hundred kB. */
const RSS_GROWTH_BOUND_MB = 384;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('OTLP ingest under fuzzing', () => {
  it(`answers ${BODIES} mutated bodies without a 5xx and stays healthy`, async () => {
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 200);
    const tally = await runOtlpFuzz({
      otlpUrl: server.otlpUrl,
      seed: SEED,
      count: BODIES,
      concurrency: 8,
    }).finally(() => clearInterval(sampler));
    const growthMb = (rssPeak - rssBefore) / 2 ** 20;
    console.log(
      `otlp fuzz: ${tally.bodies} bodies in ${tally.seconds.toFixed(1)} s, statuses ${JSON.stringify(tally.byStatus)}, ` +
        `${tally.partialSuccess} partial successes, ${tally.serverErrors} 5xx, peak RSS growth ${growthMb.toFixed(0)} MiB`,
    );

    expect(tally.bodies).toBe(BODIES);
    expect(tally.samples).toEqual([]); // 5xx or dropped connections, with the body to reproduce
    expect(tally.serverErrors).toBe(0);
    expect(tally.refusedByDatabase).toBe(0);
    // The mutants reach every outcome: stored, partly stored, refused as a whole.
    expect(tally.byStatus[200]).toBeGreaterThan(BODIES * 0.2);
    expect(tally.partialSuccess).toBeGreaterThan(BODIES * 0.02);
    expect(tally.byStatus[400]).toBeGreaterThan(BODIES * 0.2);
    expect(growthMb).toBeLessThan(RSS_GROWTH_BOUND_MB);

    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    // Still ingesting: a valid span after the storm is stored.
    const now = BigInt(Date.now() - 1000) * 1_000_000n;
    const res = await fetch(`${server.otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [
          {
            resource: {
              attributes: [{ key: 'service.name', value: { stringValue: 'after-fuzz' } }],
            },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: 'f'.repeat(32),
                    spanId: 'e'.repeat(16),
                    name: 'GET /after',
                    kind: 2,
                    startTimeUnixNano: String(now),
                    endTimeUnixNano: String(now + 1_000_000n),
                  },
                ],
              },
            ],
          },
        ],
      }),
    });
    expect(res.status).toBe(200);
    const { rows } = await server.onset.pool.query(
      `SELECT count(*)::int AS n FROM observations o JOIN series s ON s.id = o.series_id WHERE s.service = 'after-fuzz'`,
    );
    expect(rows[0].n).toBe(1);
  }, 600_000); // 88-137 s measured with 2 cores shared by many test runs (load average ~18)
});
