/**
 * Ingest under load through two faults: a PostgreSQL backend SIGKILLed (the
 * postmaster then resets every backend and recovers: a crash-restart) and the
 * server process SIGKILLed and started again. Senders behave like OTLP
 * exporters: an export that is not answered 200 is sent again, unchanged, until
 * it is. Afterwards every span is stored exactly once, in the raw rows, the
 * histograms and the durations: nothing acknowledged is lost, nothing retried
 * is doubled.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { exportUntilAcked, startServerProcess, type ServerProcess } from '@onset/testkit';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.ts';

let dir: string;
let db: EmbeddedDatabase | undefined;
let server: ServerProcess | undefined;

afterAll(async () => {
  if (server && server.proc.exitCode === null) await server.stop().catch(() => {});
  await db?.stop().catch(() => {});
  if (dir) await rm(dir, { recursive: true, force: true });
});

const SPANS = 40;
const hex = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, '0');

/** One export: `SPANS` spans of 4 services over two hosts, trace and span ids unique to `n`. */
function exportBody(n: number): string {
  const start = BigInt(Date.now() - 20_000) * 1_000_000n;
  return JSON.stringify({
    resourceSpans: [0, 1].map((h) => ({
      resource: {
        attributes: [
          { key: 'service.name', value: { stringValue: `fault-${n % 4}` } },
          { key: 'host.name', value: { stringValue: `host-${h}` } },
        ],
      },
      scopeSpans: [
        {
          spans: Array.from({ length: SPANS / 2 }, (_, i) => ({
            traceId: hex(n, 12) + hex(h * 100 + i, 4),
            spanId: hex(n, 4) + hex(h * 100 + i + 1, 4),
            name: i % 3 ? 'GET /checkout' : 'fsync',
            kind: i % 3 ? 2 : 1,
            attributes:
              i % 3 ? [{ key: 'http.request.method', value: { stringValue: 'GET' } }] : [],
            startTimeUnixNano: String(start + BigInt(i) * 1_000_000n),
            endTimeUnixNano: String(start + BigInt(i) * 1_000_000n + BigInt(1 + i) * 500_000n),
          })),
        },
      ],
    })),
  });
}

/** Send until answered 200 (whichever server is up by then); resolves with the tries it took. */
const deliver = (n: number, stopAt: number): Promise<number> =>
  exportUntilAcked(() => server!.otlpUrl, exportBody(n), {
    giveUpAt: stopAt,
    timeoutMs: 10_000,
    maxWaitMs: 200,
  }).catch((err: Error) => {
    throw new Error(`export ${n}: ${err.message}`);
  });

describe('ingest through a PostgreSQL crash-restart and a server SIGKILL', () => {
  it('stores every exported span exactly once', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'onset-fault-'));
    await chmod(dir, 0o755);
    db = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data'), ephemeral: true });
    await db.createDatabase('onset');
    const url = db.url('onset');
    server = await startServerProcess(url);
    const admin = new pg.Client({ connectionString: db.url('postgres') });
    admin.on('error', () => {}); // the crash-restart ends this session too
    await admin.connect();

    const giveUp = Date.now() + 120_000;
    let next = 1; // export 0 would have an all-zero trace id, which is refused
    let sending = true;
    let retried = 0;
    const sender = async () => {
      while (sending) {
        const tries = await deliver(next++, giveUp);
        if (tries > 1) retried++;
      }
    };
    const senders = Array.from({ length: 6 }, sender);
    const until = (ms: number) => new Promise((r) => setTimeout(r, ms));

    await until(1500);
    // A backend of the onset database killed mid-work: the postmaster resets them all.
    const { rows } = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = 'onset' AND backend_type = 'client backend'`,
    );
    expect(rows.length).toBeGreaterThan(0);
    process.kill(rows[0]!.pid, 'SIGKILL');
    await until(3000);
    const beforeKill = next;
    server.proc.kill('SIGKILL');
    await new Promise((r) => server!.proc.once('exit', r));
    server = await startServerProcess(url);
    await until(1500);
    sending = false;
    await Promise.all(senders);
    await admin.end().catch(() => {});

    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const { rows: counts } = await c.query<{
      n: string;
      distinct_n: string;
      h: string;
      d: string;
    }>(
      `SELECT (SELECT count(*) FROM observations) AS n,
              (SELECT count(*) FROM (SELECT DISTINCT trace_id, span_id FROM observations) x) AS distinct_n,
              (SELECT coalesce(sum(count), 0) FROM histograms) AS h,
              (SELECT coalesce(sum(cardinality(durations)), 0) FROM span_durations) AS d`,
    );
    await c.end();
    const exports = next - 1;
    const expected = exports * SPANS;
    console.log(
      `fault test: ${exports} exports (${beforeKill} before the server's SIGKILL), ${retried} needed a retry, ${expected} spans`,
    );
    expect(retried).toBeGreaterThan(0); // the faults did refuse exports
    expect(Number(counts[0]!.n)).toBe(expected);
    expect(Number(counts[0]!.distinct_n)).toBe(expected);
    expect(Number(counts[0]!.h)).toBe(expected);
    expect(Number(counts[0]!.d)).toBe(expected);
  }, 240_000);
});
