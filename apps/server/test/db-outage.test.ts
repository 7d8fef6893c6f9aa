import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startTestServer, type TestServer } from '@onset/testkit';
import { freePort, startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.ts';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/main.ts');
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
  fetch(`${server!.otlpUrl}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });

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

/**
 * The operator's outage: PostgreSQL stopped for 90 s (so the job runner's cron
 * meets it at a minute boundary at least once) while an exporter keeps sending.
 * The server is a real process running its scheduler, as `npm start` runs it.
 * ONSET_DB_RETRY_MAX=2s only shortens how long it waits between probes of the
 * database after it is back (documented in docs/deploy.md).
 */
describe('a 90 s PostgreSQL outage across a minute boundary', () => {
  const OUTAGE_MS = 90_000;
  let outageDir: string | undefined;
  let outageDb: EmbeddedDatabase | undefined;
  let proc: ChildProcess | undefined;
  afterAll(async () => {
    proc?.kill('SIGKILL');
    await outageDb?.stop().catch(() => {});
    if (outageDir) await rm(outageDir, { recursive: true, force: true });
  });

  it('keeps the process up, answers 503 + Retry-After, stores every acknowledged span once, and resumes the passes', async () => {
    outageDir = await mkdtemp(path.join(os.tmpdir(), 'onset-outage90-'));
    await chmod(outageDir, 0o755);
    const pgPort = await freePort();
    const port = await freePort();
    const dataDir = path.join(outageDir, 'data');
    outageDb = await startEmbeddedPostgres({ dataDir, port: pgPort });
    await outageDb.createDatabase('onset');
    const databaseUrl = outageDb.url('onset');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      ONSET_PORT: String(port),
      ONSET_OTLP_PORT: '0',
      ONSET_LOG_LEVEL: 'info',
      ONSET_DB_RETRY_MAX: '2s',
    };
    proc = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout!.on('data', (d) => (out += d));
    proc.stderr!.on('data', (d) => (out += d));
    let exitedAt: string | null = null;
    proc.once(
      'exit',
      (code, signal) => (exitedAt = `${new Date().toISOString()} code ${code} signal ${signal}`),
    );
    const base = `http://127.0.0.1:${port}`;
    await until(
      async () => (await fetch(`${base}/readyz`).catch(() => null))?.ok === true,
      60_000,
      () => out,
    );

    // An exporter: a new batch every 200 ms; a refused batch is re-sent as is (same span ids)
    // after Retry-After, as OTLP exporters do. Spans start inside the current minute.
    const acked = new Set<string>();
    let next = 1;
    let pending: { ids: string[]; body: string } | null = null;
    let sending = true;
    const refusals: Array<{ status: number; retryAfter: string | null }> = [];
    const sender = (async () => {
      while (sending || pending) {
        if (!pending) {
          const ids = Array.from({ length: 5 }, () => (next++).toString(16).padStart(16, '0'));
          pending = { ids, body: spansOf('outage-90', ids) };
        }
        const res = await fetch(`${base}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: pending.body,
          signal: AbortSignal.timeout(15_000),
        }).catch(() => null);
        if (res?.status === 200) {
          for (const id of pending.ids) acked.add(id);
          pending = null;
          await sleep(200);
        } else {
          refusals.push({
            status: res?.status ?? 0,
            retryAfter: res?.headers.get('retry-after') ?? null,
          });
          await res?.body?.cancel();
          await sleep(1000);
        }
      }
    })();

    await until(
      async () => acked.size >= 25,
      30_000,
      () => out,
    );
    // A detection pass before the outage, so "after" below is a new one.
    await until(
      async () => (await detectStatus(base)).passes > 0,
      90_000,
      () => out,
    );
    const sloRunsBefore = await jobRuns(base, 'slo_evaluate');

    const stoppedAt = Date.now();
    await outageDb.stop();
    outageDb = undefined;
    const ackedBefore = acked.size;

    // During the outage: alive, 503 + Retry-After, /readyz not ready with a short reason.
    await sleep(3000);
    const down = await fetch(`${base}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: spansOf('outage-90', ['ffffffffffffff01']),
    });
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toMatch(/^\d+$/);
    await down.body?.cancel();
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.status).toBe(503);
    const readyBody = (await notReady.json()) as { status: string; database: string };
    expect(readyBody.status).toBe('not ready');
    expect(readyBody.database).toBe('unreachable');
    expect(JSON.stringify(readyBody)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|\d{4,5}/);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    const boundaryMs = Math.ceil(stoppedAt / 60_000) * 60_000;
    await sleep(stoppedAt + OUTAGE_MS - Date.now());
    expect(Date.now()).toBeGreaterThan(boundaryMs); // the cron met the outage at a minute boundary
    expect(exitedAt, out).toBeNull();
    expect(proc.exitCode).toBeNull();
    const ackedDuring = acked.size - ackedBefore;
    expect(ackedDuring).toBe(0);

    const restartedAt = Date.now();
    outageDb = await startEmbeddedPostgres({ dataDir, port: pgPort });
    // Readiness comes back by itself, the refused batches go in, and the sender catches up.
    await until(
      async () => (await fetch(`${base}/readyz`)).ok,
      30_000,
      () => out,
    );
    const readyMs = Date.now() - restartedAt;
    const target = next + 10;
    await until(
      async () => next > target && acked.size > ackedBefore + 50,
      30_000,
      () => out,
    );
    sending = false;
    await sender;
    expect(refusals.length).toBeGreaterThan(10);
    for (const r of refusals.filter((x) => x.status !== 0)) {
      expect(r.status).toBe(503);
      expect(r.retryAfter).toMatch(/^\d+$/);
    }

    // The passes resume without waiting for the next cron minute to come round twice.
    await until(
      async () => {
        const d = await detectStatus(base);
        return d.last !== null && Date.parse(d.last.started_at) >= restartedAt;
      },
      90_000,
      () => out,
    );
    const detectMs = Date.now() - restartedAt;
    await until(
      async () => (await jobRuns(base, 'slo_evaluate')) > sloRunsBefore,
      90_000,
      () => out,
    );
    const sloMs = Date.now() - restartedAt;

    // Every acknowledged span stored exactly once; nothing else of this service stored.
    const check = new pg.Client({ connectionString: databaseUrl });
    await check.connect();
    try {
      const { rows } = await check.query<{ span: string; n: number }>(
        `SELECT encode(o.span_id, 'hex') AS span, count(*)::int AS n
           FROM observations o JOIN series s ON s.id = o.series_id
          WHERE s.service = 'outage-90' GROUP BY 1`,
      );
      const stored = new Map(rows.map((r) => [r.span, r.n]));
      expect([...stored.values()].every((n) => n === 1)).toBe(true);
      expect(new Set(stored.keys())).toEqual(acked);
      const { rows: h } = await check.query<{ n: number }>(
        `SELECT coalesce(sum(h.count), 0)::int AS n FROM histograms h JOIN series s ON s.id = h.series_id
          WHERE s.service = 'outage-90'`,
      );
      expect(h[0]!.n).toBe(acked.size);
    } finally {
      await check.end();
    }

    expect(proc.exitCode).toBeNull();
    // Logged once, not once per job per retry; and its recovery once.
    expect(out.match(/database unavailable; background work paused/g) ?? []).toHaveLength(1);
    expect(out.match(/database reachable again/g) ?? []).toHaveLength(1);
    expect(out).not.toMatch(/"level":50/); // no error-level line for an outage
    console.log(
      `outage test: ${(restartedAt - stoppedAt) / 1000} s outage; ${acked.size} spans acknowledged (${ackedBefore} before), ` +
        `${refusals.length} refusals; after the restart: ready in ${readyMs} ms, a detection pass in ${detectMs} ms, ` +
        `an SLO pass in ${sloMs} ms; process alive throughout`,
    );
  }, 300_000);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function until(
  check: () => Promise<boolean>,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms; server output:\n${output().slice(-4000)}`);
    await sleep(250);
  }
}

function spansOf(service: string, spanIds: string[]): string {
  const start = BigInt(Date.now() - 1000) * 1_000_000n;
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [
          {
            spans: spanIds.map((spanId) => ({
              traceId: '99998888777766665555444433332222',
              spanId,
              name: 'fsync',
              startTimeUnixNano: String(start),
              endTimeUnixNano: String(start + 2_000_000n),
            })),
          },
        ],
      },
    ],
  });
}

async function detectStatus(
  base: string,
): Promise<{ passes: number; last: { started_at: string } | null }> {
  return (await (await fetch(`${base}/api/v1/detect`)).json()) as {
    passes: number;
    last: { started_at: string } | null;
  };
}

/** Successful runs of a background task, from the server's own /metrics. */
async function jobRuns(base: string, task: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`onset_jobs_total{task="${task}",result="success"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('outageReason', () => {
  it('names the outage in a few fixed words, never the driver text', async () => {
    const { outageReason } = await import('../src/db/availability.ts');
    expect(
      outageReason({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 10.1.2.3:5432' }),
    ).toBe('unreachable');
    expect(outageReason({ code: '57P03', message: 'the database system is starting up' })).toBe(
      'starting up or shutting down',
    );
    expect(
      outageReason({
        code: '57P01',
        message: 'terminating connection due to administrator command',
      }),
    ).toBe('restarting');
    expect(outageReason({ code: '53300', message: 'sorry, too many clients already' })).toBe(
      'too many connections',
    );
    expect(
      outageReason({ code: '28P01', message: 'password authentication failed for user "onset"' }),
    ).toBe('authentication failed');
    expect(outageReason(new Error('timeout exceeded when trying to connect'))).toBe(
      'connection timed out',
    );
    expect(
      outageReason({ code: '57014', message: 'canceling statement due to statement timeout' }),
    ).toBe('error');
  });
});
