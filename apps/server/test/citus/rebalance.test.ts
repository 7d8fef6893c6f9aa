/**
 * A third Citus worker added and the shards rebalanced onto it while ingest runs (docs/citus.md
 * "Adding a worker"): senders behave like OTLP exporters (protobuf exports, each sent again
 * unchanged until answered 200, testkit's exportUntilAcked); meanwhile a worker is started,
 * joined with citus_add_node and `citus_rebalance_start(shard_transfer_mode => 'block_writes')`
 * moves shard groups onto it. Afterwards the shards sit on three workers, the new one holds
 * spans, and every acknowledged span is stored exactly once in the raw rows, the histograms and
 * the durations. Its own cluster: adding a node to the project's shared one would move shards
 * under the suites running beside it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { TraceRequest } from '@onset/server/internals';
import { exportUntilAcked, startServerProcess, type ServerProcess } from '@onset/testkit';
import {
  citusMissing,
  joinCitusWorker,
  startCitusCluster,
  type CitusCluster,
} from '@onset/testkit/citus';

const missing = citusMissing();
const SPANS = 40;
const SENDERS = 4;
/**
 * block_writes: `auto` (logical replication) refuses these tables, which have unique indexes but
 * no primary key or replica identity ("cannot use logical replication to transfer shards of the
 * relation span_durations_p… since it doesn't have a REPLICA IDENTITY or PRIMARY KEY").
 */
const MODE = process.env.ONSET_REBALANCE_MODE ?? 'block_writes';
const id = (n: number, i: number, bytes: number) => {
  const b = Buffer.alloc(bytes);
  b.writeUInt32BE(i + 1, 0);
  b.writeUInt32BE(n, bytes - 4);
  return b;
};

/** One protobuf export of `SPANS` spans in `SPANS` traces (spread over every shard), ids unique to `n`. */
function exportBody(n: number): Uint8Array {
  const start = BigInt(Date.now() - 20_000) * 1_000_000n;
  const kv = (key: string, v: string) => ({ key, value: { stringValue: v } });
  const msg = TraceRequest.fromObject({
    resourceSpans: [0, 1].map((h) => ({
      resource: {
        attributes: [kv('service.name', `rebalance-${n % 4}`), kv('host.name', `host-${h}`)],
      },
      scopeSpans: [
        {
          spans: Array.from({ length: SPANS / 2 }, (_, k) => {
            const i = h * (SPANS / 2) + k;
            return {
              traceId: id(n, i, 16),
              spanId: id(n, i, 8),
              name: i % 3 ? 'GET /checkout' : 'fsync',
              kind: i % 3 ? 2 : 1,
              attributes: i % 3 ? [kv('http.request.method', 'GET')] : [],
              startTimeUnixNano: String(start + BigInt(i) * 1_000_000n),
              endTimeUnixNano: String(start + BigInt(i) * 1_000_000n + BigInt(1 + i) * 500_000n),
            };
          }),
        },
      ],
    })),
  });
  return TraceRequest.encode(msg).finish();
}

let cluster: CitusCluster | undefined;
let server: ServerProcess | undefined;

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.stop().catch(() => {});
  await cluster?.stop().catch(() => {});
});

async function shardsPerNode(c: pg.Client): Promise<Record<string, number>> {
  const { rows } = await c.query<{ node: string; n: number }>(
    `SELECT nodeport::text AS node, count(*)::int AS n FROM citus_shards
      WHERE citus_table_type = 'distributed' GROUP BY 1 ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.node, r.n]));
}

describe.skipIf(missing)(
  `a third Citus worker added and shards rebalanced under ingest${missing ? ` (skipped: missing ${missing})` : ''}`,
  () => {
    it('moves shards onto it while ingest runs, losing and doubling no acknowledged span', async () => {
      cluster = await startCitusCluster({ workers: 2 });
      const url = await cluster.createDatabase('onset_rebalance');
      server = await startServerProcess(url);
      const admin = new pg.Client({ connectionString: url });
      admin.on('error', () => {}); // the cluster's stop ends it when the test fails
      await admin.connect();

      const refusals = new Map<string, number>();
      let phase = 'before';
      const giveUp = Date.now() + 200_000;
      let next = 1;
      let sending = true;
      let retried = 0;
      let slowest = 0;
      const acked = new Set<number>();
      const sender = async () => {
        while (sending) {
          const n = next++;
          const t0 = Date.now();
          const tries = await exportUntilAcked(server!.otlpUrl, exportBody(n), {
            giveUpAt: giveUp,
            timeoutMs: 60_000,
            onRefused: (r) => {
              const k = `${phase} ${r.status}${r.retryAfter ? ' retry-after' : ''}`;
              refusals.set(k, (refusals.get(k) ?? 0) + 1);
            },
          });
          slowest = Math.max(slowest, Date.now() - t0);
          if (tries > 1) retried++;
          acked.add(n);
        }
      };
      const senders = Array.from({ length: SENDERS }, sender);
      const until = (ms: number) => new Promise((r) => setTimeout(r, ms));

      await until(3000);
      const before = await shardsPerNode(admin);
      phase = 'adding';
      const w3 = await cluster.addWorker();
      await joinCitusWorker(url, w3.url());
      const ackedBeforeMove = acked.size;
      phase = 'moving';
      const t0 = Date.now();
      await admin.query(
        `SELECT citus_rebalance_start(shard_transfer_mode => $1::citus.shard_transfer_mode)`,
        [MODE],
      );
      await admin.query('SELECT citus_rebalance_wait()');
      const moveMs = Date.now() - t0;
      const ackedDuringMove = acked.size - ackedBeforeMove;
      const { rows: job } = await admin.query<{ state: string; tasks: string }>(
        `SELECT state::text, (SELECT count(*) FROM pg_dist_background_task t WHERE t.job_id = j.job_id)::text AS tasks
           FROM pg_dist_background_job j ORDER BY job_id DESC LIMIT 1`,
      );
      phase = 'after';
      const resumedFrom = acked.size;
      const by = Date.now() + 30_000;
      while (acked.size < resumedFrom + 8 && Date.now() < by) await until(250);
      sending = false;
      await Promise.all(senders);
      expect(server.proc.exitCode).toBeNull();

      const after = await shardsPerNode(admin);
      const { rows: onNew } = await admin.query<{ n: string }>(
        `SELECT coalesce(sum(r.result::bigint), 0)::text AS n
           FROM run_command_on_shards('observations', $$SELECT count(*) FROM %s$$) r
           JOIN citus_shards s USING (shardid) WHERE r.success AND s.nodeport = $1`,
        [w3.port],
      );
      const { rows } = await admin.query<{ n: string; distinct_n: string; h: string; d: string }>(
        `SELECT (SELECT count(*) FROM observations) AS n,
                (SELECT count(*) FROM (SELECT DISTINCT trace_id, span_id FROM observations) x) AS distinct_n,
                (SELECT coalesce(sum(count), 0) FROM histograms) AS h,
                (SELECT coalesce(sum(cardinality(durations)), 0) FROM span_durations) AS d`,
      );
      await admin.end();
      const expected = acked.size * SPANS;
      console.log(
        `rebalance (${MODE}): ${acked.size} exports x ${SPANS} spans acked (${ackedBeforeMove} before the move, ${ackedDuringMove} during its ${(moveMs / 1000).toFixed(1)} s, job ${job[0]?.state} with ${job[0]?.tasks} moves), ${retried} retried, slowest export ${slowest} ms; refusals ${JSON.stringify(Object.fromEntries(refusals))}; shards per node port before ${JSON.stringify(before)} after ${JSON.stringify(after)}; spans on the new worker ${onNew[0]?.n}`,
      );
      expect(Object.keys(before)).toHaveLength(2);
      expect(Object.keys(after)).toHaveLength(3);
      expect(after[String(w3.port)]).toBeGreaterThan(0);
      expect(job[0]?.state).toBe('finished');
      expect(Number(onNew[0]!.n)).toBeGreaterThan(0);
      expect(acked.size).toBeGreaterThan(resumedFrom); // ingest went on after the move
      expect(Number(rows[0]!.n)).toBe(expected);
      expect(Number(rows[0]!.distinct_n)).toBe(expected);
      expect(Number(rows[0]!.h)).toBe(expected);
      expect(Number(rows[0]!.d)).toBe(expected);
    }, 240_000);
  },
);
