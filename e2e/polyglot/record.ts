/**
 * Records e2e/fixtures/sdk/: runs the polyglot harness (build.ts,
 * services.ts) with each service exporting to its own loopback recorder,
 * sends some checkouts, steps the api (+25 ms in /quote) and the store (×3),
 * sends some more, stops the services (each SDK flushes) and writes every
 * body as it was sent, with a manifest and a readable summary.
 *
 *   node --import tsx e2e/polyglot/record.ts [checkouts-per-phase, default 12]
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  SDK_FIXTURES,
  decodeBody,
  type FixtureBody,
  type SdkManifest,
} from '../fixtures/sdk/index.ts';
import { JAVA_AGENT_VERSION, buildPolyglot, findToolchains } from './build.ts';
import { startRecorder, type Captured } from './recorder.ts';
import { startPolyglot } from './services.ts';

const PER_PHASE = Number(process.argv[2] ?? 12);
/** Metrics every 5 s instead of 60 s, so a short recording holds a few exports. */
const ENV = { OTEL_METRIC_EXPORT_INTERVAL: '5000' };

type Any = Record<string, any>;

const anyValue = (v: Any): unknown =>
  v.stringValue ??
  v.intValue?.toString() ??
  v.doubleValue ??
  v.boolValue ??
  (v.arrayValue ? '[array]' : null);
const attrs = (list: Any[] | undefined) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, anyValue(a.value ?? {})]));
const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

/** What the bodies hold: one example of each (name, kind) with its attributes; metric names. */
function summarize(caps: Captured[]) {
  const spans = new Map<string, Any>();
  const metrics = new Map<string, Any>();
  let resource: Any = {};
  for (const c of caps) {
    if (c.signal === 'logs') continue;
    const msg = decodeBody(c.signal, c.body);
    for (const r of msg.resourceSpans ?? msg.resourceMetrics ?? []) {
      resource = attrs(r.resource?.attributes);
      for (const s of r.scopeSpans ?? [])
        for (const sp of s.spans ?? []) {
          const key = `${KINDS[sp.kind]} ${sp.name}`;
          const seen = spans.get(key);
          if (seen) seen.count++;
          else
            spans.set(key, {
              name: sp.name,
              kind: KINDS[sp.kind],
              scope: `${s.scope?.name} ${s.scope?.version ?? ''}`.trim(),
              count: 1,
              attributes: attrs(sp.attributes),
              status: sp.status?.code ?? 0,
            });
        }
      for (const s of r.scopeMetrics ?? [])
        for (const m of s.metrics ?? []) {
          const type = ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'].find(
            (t) => m[t],
          );
          const data = m[type!] ?? {};
          const points: Any[] = data.dataPoints ?? [];
          const seen = metrics.get(m.name);
          if (seen) seen.points += points.length;
          else
            metrics.set(m.name, {
              name: m.name,
              unit: m.unit,
              type,
              temporality: ['unspecified', 'delta', 'cumulative'][data.aggregationTemporality ?? 0],
              scope: `${s.scope?.name} ${s.scope?.version ?? ''}`.trim(),
              points: points.length,
              attributes: attrs(points[0]?.attributes),
            });
        }
    }
  }
  return { resource, spans: [...spans.values()], metrics: [...metrics.values()] };
}

function items(c: Captured): number {
  if (c.signal === 'logs') return 0;
  const msg = decodeBody(c.signal, c.body);
  let n = 0;
  for (const r of msg.resourceSpans ?? [])
    for (const s of r.scopeSpans ?? []) n += (s.spans ?? []).length;
  for (const r of msg.resourceMetrics ?? [])
    for (const s of r.scopeMetrics ?? [])
      for (const m of s.metrics ?? []) {
        const data = m.gauge ?? m.sum ?? m.histogram ?? m.exponentialHistogram ?? m.summary;
        n += (data?.dataPoints ?? []).length;
      }
  return n;
}

async function main() {
  const tools = findToolchains();
  if ('missing' in tools) throw new Error(`missing toolchains: ${tools.missing.join(', ')}`);
  const built = await buildPolyglot(tools);
  const rec = {
    web: await startRecorder(),
    api: await startRecorder(),
    store: await startRecorder(),
  };
  // Each service its own recorder: startPolyglot takes one endpoint, so each is started with
  // OTEL_EXPORTER_OTLP_ENDPOINT overridden per service through its name.
  const pg = await startPolyglot(tools, built, '', ENV, {
    web: rec.web.url,
    api: rec.api.url,
    store: rec.store.url,
  });
  const checkout = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await fetch(`${pg.webUrl}/checkout/${(i % 5) + 1}`);
      if (!r.ok) throw new Error(`checkout: HTTP ${r.status} ${await r.text()}`);
      await r.arrayBuffer();
      await new Promise((res) => setTimeout(res, 100));
    }
  };
  await checkout(PER_PHASE);
  // Let one metric export pass between the phases.
  await new Promise((r) => setTimeout(r, 6_000));
  pg.api.send('step');
  pg.store.send('step');
  const stepAtMs = Math.max(
    Number(await pg.api.line('switched')),
    Number(await pg.store.line('switched')),
  );
  await checkout(PER_PHASE);
  await new Promise((r) => setTimeout(r, 6_000));
  await pg.stop();
  for (const r of Object.values(rec)) await r.close();

  const sdks = [
    {
      dir: 'python-requests',
      service: 'web',
      caps: rec.web.captured,
      instrumentation:
        'Flask app calling through requests, run under opentelemetry-instrument (opentelemetry-distro 0.66b1, opentelemetry-instrumentation-flask and -requests 0.66b1, SDK 1.45.1), default settings',
    },
    {
      dir: 'go-otelhttp',
      service: 'api',
      caps: rec.api.captured,
      instrumentation:
        'Go net/http with otelhttp on both sides (otelhttp v0.72.0, otel v1.47.0, otlptracehttp exporter), traces only',
    },
    {
      dir: 'java-agent',
      service: 'store',
      caps: rec.store.captured,
      instrumentation: `JDK com.sun.net.httpserver under the OpenTelemetry Java agent ${JAVA_AGENT_VERSION}, default settings (its HTTP and JVM metrics included)`,
    },
  ];
  for (const s of sdks) {
    const dir = path.join(SDK_FIXTURES, s.dir);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const bodies: FixtureBody[] = s.caps.map((c, i) => {
      const file = `${String(i + 1).padStart(2, '0')}-${c.signal}.binpb`;
      writeFileSync(path.join(dir, file), c.body);
      return { file, signal: c.signal, contentType: c.contentType, items: items(c) };
    });
    const manifest: SdkManifest = {
      sdk: s.dir,
      service: s.service,
      instrumentation: s.instrumentation,
      userAgent: s.caps[0]?.userAgent ?? '',
      recordedAt: new Date().toISOString(),
      stepAtMs,
      checkouts: { before: PER_PHASE, after: PER_PHASE },
      env: ENV,
      bodies,
    };
    writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    writeFileSync(
      path.join(dir, 'summary.json'),
      JSON.stringify(summarize(s.caps), null, 2) + '\n',
    );
    console.log(`${s.dir}: ${readdirSync(dir).length} files, ${bodies.length} bodies`);
  }
}

await main();
