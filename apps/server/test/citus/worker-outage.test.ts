/**
 * A Citus worker stopped for 30 s under ingest load (docs/citus.md "When a worker is down"):
 * senders behave like OTLP exporters (an export not answered 200 is sent again, unchanged,
 * after the Retry-After it was given, at most a second here). While the worker is down ingest
 * answers 503 with Retry-After, never a 500, and the server keeps running; once the worker is
 * back exports are accepted again, and every acknowledged span is stored exactly once in the raw
 * rows, the histograms and the durations. Its own cluster: stopping a worker of the project's
 * shared one would fail the suites running beside it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { exportUntilAcked, startServerProcess, type ServerProcess } from '@onset/testkit';
import { citusMissing, startCitusCluster, type CitusCluster } from '@onset/testkit/citus';

const missing = citusMissing();
const SPANS = 40;
const DOWN_MS = 30_000;
const hex = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, '0');

/** One export of `SPANS` spans in `SPANS` traces (spread over every shard), ids unique to `n`. */
function exportBody(n: number): string {
  const start = BigInt(Date.now() - 20_000) * 1_000_000n;
  return JSON.stringify({
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: `outage-${n % 4}` } },
            { key: 'host.name', value: { stringValue: `host-${n % 2}` } },
          ],
        },
        scopeSpans: [
          {
            spans: Array.from({ length: SPANS }, (_, i) => ({
              traceId: hex(i + 1, 4) + hex(n, 12),
              spanId: hex(n, 4) + hex(i + 1, 4),
              name: i % 3 ? 'GET /checkout' : 'fsync',
              kind: i % 3 ? 2 : 1,
              attributes:
                i % 3 ? [{ key: 'http.request.method', value: { stringValue: 'GET' } }] : [],
              startTimeUnixNano: String(start + BigInt(i) * 1_000_000n),
              endTimeUnixNano: String(start + BigInt(i) * 1_000_000n + BigInt(1 + i) * 500_000n),
            })),
          },
        ],
      },
    ],
  });
}

let cluster: CitusCluster | undefined;
let server: ServerProcess | undefined;

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.stop().catch(() => {});
  await cluster?.stop().catch(() => {});
});

describe.skipIf(missing)(
  `a Citus worker down for 30 s under ingest${missing ? ` (skipped: missing ${missing})` : ''}`,
  () => {
    it('answers 503 with Retry-After while it is down, then stores every acknowledged span exactly once', async () => {
      cluster = await startCitusCluster({ workers: 2 });
      const url = await cluster.createDatabase('onset_outage');
      server = await startServerProcess(url);
      const statuses = new Map<string, number>();
      let down = false;
      const note = (s: string) => statuses.set(s, (statuses.get(s) ?? 0) + 1);

      const giveUp = Date.now() + 150_000;
      /** Send until answered 200 (testkit's exporter); resolves with the tries it took. */
      const deliver = (n: number): Promise<number> =>
        exportUntilAcked(server!.otlpUrl, exportBody(n), {
          giveUpAt: giveUp,
          onRefused: (r) =>
            note(`${down ? 'down' : 'up'} ${r.status}${r.retryAfter ? ' retry-after' : ''}`),
        }).catch((err: Error) => {
          throw new Error(`export ${n}: ${err.message}`);
        });

      let next = 1;
      let sending = true;
      let retried = 0;
      const acked = new Set<number>();
      const sender = async () => {
        while (sending) {
          const n = next++;
          if ((await deliver(n)) > 1) retried++;
          acked.add(n);
        }
      };
      const senders = Array.from({ length: 4 }, sender);
      const until = (ms: number) => new Promise((r) => setTimeout(r, ms));

      await until(3000);
      const beforeOutage = acked.size;
      down = true;
      await cluster.workers[0]!.stop();
      const ackedWhileDownFrom = acked.size;
      await until(DOWN_MS);
      const ackedWhileDown = acked.size - ackedWhileDownFrom;
      await cluster.workers[0]!.start();
      down = false;
      const resumedFrom = acked.size;
      const resumeBy = Date.now() + 60_000;
      while (acked.size < resumedFrom + 8 && Date.now() < resumeBy) await until(250);
      sending = false;
      await Promise.all(senders);
      expect(server.proc.exitCode).toBeNull(); // no crash

      const c = new pg.Client({ connectionString: url });
      await c.connect();
      const { rows } = await c.query<{ n: string; distinct_n: string; h: string; d: string }>(
        `SELECT (SELECT count(*) FROM observations) AS n,
                (SELECT count(*) FROM (SELECT DISTINCT trace_id, span_id FROM observations) x) AS distinct_n,
                (SELECT coalesce(sum(count), 0) FROM histograms) AS h,
                (SELECT coalesce(sum(cardinality(durations)), 0) FROM span_durations) AS d`,
      );
      await c.end();
      const expected = acked.size * SPANS;
      console.log(
        `worker outage: ${acked.size} exports (${beforeOutage} before, ${ackedWhileDown} during the 30 s), ${retried} retried; refusals ${JSON.stringify(Object.fromEntries(statuses))}`,
      );
      expect(statuses.get('down 503 retry-after') ?? 0).toBeGreaterThan(0);
      expect([...statuses.keys()].filter((s) => !s.endsWith(' 503 retry-after'))).toEqual([]);
      expect(acked.size).toBeGreaterThan(resumedFrom); // it resumed
      expect(Number(rows[0]!.n)).toBe(expected);
      expect(Number(rows[0]!.distinct_n)).toBe(expected);
      expect(Number(rows[0]!.h)).toBe(expected);
      expect(Number(rows[0]!.d)).toBe(expected);
    }, 240_000);
  },
);
