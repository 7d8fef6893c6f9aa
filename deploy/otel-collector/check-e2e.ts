/**
 * End-to-end check of the shipped Collector config in front of a real Onset
 * (development only; needs a Collector binary, see docs/deploy.md):
 *
 *   OTELCOL_BIN=./otelcol-onset/otelcol-onset node --import tsx deploy/otel-collector/check-e2e.ts
 *
 * For every compression the Collector can send it exports spans with the OTel
 * SDK to the Collector and counts them in Onset's database; then it checks
 * that a refusal's google.rpc.Status message reaches the Collector's log, and
 * that the file_storage queue keeps acknowledged spans across a Collector
 * restart while Onset is unreachable.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanKind } from '@opentelemetry/api';
import { startTestServer } from '@onset/testkit';
import {
  setup as startPostgres,
  teardown as stopPostgres,
} from '../../packages/testkit/src/global-setup.ts';

const BIN = process.env.OTELCOL_BIN;
if (!BIN) throw new Error('set OTELCOL_BIN to a Collector built as in docs/deploy.md');
const CONFIG = new URL('./config.yaml', import.meta.url);
const LB_CONFIG = new URL('./loadbalancing.yaml', import.meta.url);
const HTTP_PORT = 24318;
const GRPC_PORT = 24317;
const HEALTH_PORT = 23133;
const LB_HTTP_PORT = 24328;
const LB_HEALTH_PORT = 23134;
const work = mkdtempSync(join(tmpdir(), 'onset-collector-e2e-'));
await startPostgres();
const server = await startTestServer();

interface Collector {
  proc: ChildProcess;
  log: () => string;
}

async function startCollector(
  name: string,
  compression: string,
  endpoint: string,
  grpc = false,
): Promise<Collector> {
  const cfg = parse(readFileSync(CONFIG, 'utf8'));
  cfg.receivers.otlp.protocols = {
    http: { endpoint: `127.0.0.1:${HTTP_PORT}` },
    ...(grpc ? { grpc: { endpoint: `127.0.0.1:${GRPC_PORT}` } } : {}),
  };
  cfg.extensions.health_check.endpoint = `127.0.0.1:${HEALTH_PORT}`;
  cfg.exporters['otlp_http/onset'].compression = compression;
  cfg.exporters['otlp_http/onset'].retry_on_failure.initial_interval = '200ms';
  cfg.processors.batch.timeout = '200ms';
  return run(name, cfg, HEALTH_PORT, endpoint);
}

/** Tier 1 of loadbalancing.yaml, routing by trace id to the tier-2 Collector's gRPC port. */
async function startLoadBalancer(): Promise<Collector> {
  const cfg = parse(readFileSync(LB_CONFIG, 'utf8'));
  cfg.receivers.otlp.protocols = { http: { endpoint: `127.0.0.1:${LB_HTTP_PORT}` } };
  cfg.extensions.health_check.endpoint = `127.0.0.1:${LB_HEALTH_PORT}`;
  cfg.exporters['load_balancing/onset'].resolver.dns.port = String(GRPC_PORT);
  return run('lb-tier1', cfg, LB_HEALTH_PORT, '', { ONSET_COLLECTOR_HOSTNAME: '127.0.0.1' });
}

const running = new Set<ChildProcess>();

async function run(
  name: string,
  cfg: any,
  healthPort: number,
  endpoint: string,
  extraEnv: Record<string, string> = {},
): Promise<Collector> {
  const HEALTH_PORT = healthPort;
  cfg.service.telemetry = { metrics: { level: 'none' } }; // two Collectors at once: no shared :8888
  const file = join(work, `${name}.yaml`);
  writeFileSync(file, stringify(cfg));
  let log = '';
  const proc = spawn(BIN!, [`--config=${file}`], {
    env: {
      ...process.env,
      ONSET_OTLP_ENDPOINT: endpoint,
      ONSET_INGEST_TOKEN: 'e2e',
      ONSET_COLLECTOR_QUEUE_DIR: join(work, 'queue'),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
  proc.stdout!.on('data', (d) => (log += d));
  proc.stderr!.on('data', (d) => (log += d));
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(`http://127.0.0.1:${HEALTH_PORT}/`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { proc, log: () => log };
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill();
  throw new Error(`the Collector did not start:\n${log}`);
}

async function stop(c: Collector): Promise<void> {
  const exited = new Promise((r) => c.proc.once('exit', r));
  c.proc.kill('SIGTERM');
  await exited;
}

async function exportSpans(
  service: string,
  n: number,
  tooOld = false,
  port = HTTP_PORT,
): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'host.name': 'e2e-host' }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces` }), {
        maxExportBatchSize: 500,
        maxQueueSize: 10_000,
      }),
    ],
  });
  const tracer = provider.getTracer('collector-e2e');
  const base = tooOld ? Date.now() - 3650 * 86_400_000 : Date.now() - 60_000; // ten years old: refused by Onset, not by the Collector
  for (let i = 0; i < n; i++) {
    const start = base + i;
    const span = tracer.startSpan('GET /e2e', {
      kind: SpanKind.SERVER,
      startTime: start,
      attributes: { 'http.request.method': 'GET', 'http.route': '/e2e' },
    });
    span.end(start + 3 + (i % 7));
  }
  await provider.forceFlush();
  await provider.shutdown();
}

async function stored(
  service: string,
  want: number,
  timeoutMs = 30_000,
): Promise<{ n: number; ms: number }> {
  const t0 = Date.now();
  let n = 0;
  while (Date.now() - t0 < timeoutMs) {
    const { rows } = await server.onset.pool.query(
      'SELECT count(*)::int AS n FROM observations o JOIN series s ON s.id = o.series_id WHERE s.service = $1',
      [service],
    );
    n = rows[0].n;
    if (n >= want) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return { n, ms: Date.now() - t0 };
}

const results: Array<Record<string, unknown>> = [];
let failed = false;
try {
  for (const compression of (
    process.env.E2E_ONLY ?? 'zstd,gzip,snappy,x-snappy-framed,zlib,deflate,lz4,none'
  ).split(',')) {
    const c = await startCollector(compression, compression, server.otlpUrl);
    const service = `e2e-${compression}`;
    await exportSpans(service, 2_000);
    const r = await stored(service, 2_000);
    await stop(c);
    const refused = /HTTP Status Code 4\d\d|Permanent error/i.test(c.log());
    results.push({
      check: `compression ${compression}`,
      sent: 2_000,
      stored: r.n,
      ms: r.ms,
      refusedInLog: refused,
    });
    if (r.n !== 2_000 || refused) failed = true;
  }

  const c = await startCollector('status', 'zstd', server.otlpUrl);
  await exportSpans('e2e-refused', 1, true);
  await new Promise((r) => setTimeout(r, 3_000));
  await stop(c);
  const line =
    c
      .log()
      .split('\n')
      .find((l) => l.includes('retention window')) ?? '';
  results.push({
    check: 'refusal message in the Collector log',
    found: Boolean(line),
    line: line.slice(Math.max(0, line.indexOf('"error"')), line.indexOf('"error"') + 400),
  });
  if (!line) failed = true;

  // loadbalancing.yaml (tier 1) -> config.yaml (tier 2, gRPC in) -> Onset.
  const tier2 = await startCollector('lb-tier2', 'zstd', server.otlpUrl, true);
  const tier1 = await startLoadBalancer();
  await exportSpans('e2e-loadbalancing', 2_000, false, LB_HTTP_PORT);
  const lb = await stored('e2e-loadbalancing', 2_000);
  await stop(tier1);
  await stop(tier2);
  results.push({
    check: 'loadbalancing.yaml -> config.yaml -> Onset',
    sent: 2_000,
    stored: lb.n,
    ms: lb.ms,
  });
  if (lb.n !== 2_000) failed = true;

  // Onset unreachable: the Collector acknowledges and queues on disk; restart it, then let Onset be reachable.
  const down = await startCollector('queue-down', 'zstd', 'http://127.0.0.1:9');
  await exportSpans('e2e-queue', 1_200);
  await new Promise((r) => setTimeout(r, 1_000));
  await stop(down);
  const up = await startCollector('queue-up', 'zstd', server.otlpUrl);
  const q = await stored('e2e-queue', 1_200, 60_000);
  await stop(up);
  results.push({
    check: 'file_storage queue across a restart with Onset down',
    sent: 1_200,
    stored: q.n,
    ms: q.ms,
  });
  if (q.n !== 1_200) failed = true;
} finally {
  for (const p of running) p.kill('SIGTERM');
  console.log(JSON.stringify(results, null, 2));
  await server.close();
  await stopPostgres();
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
