/**
 * Onset traces itself with the OpenTelemetry Node SDK (NodeSDK), off by
 * default. It turns on with ONSET_SELF_TRACING=on, Onset's own variable: an
 * OTEL_EXPORTER_OTLP_ENDPOINT exported in a shell for the services being
 * observed (as the README suggests) must not make Onset trace itself.
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none force it off.
 * Everything else is the SDK's reading of the standard variables:
 * OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (over the default
 * service.name "onset-server"), OTEL_NODE_RESOURCE_DETECTORS,
 * OTEL_TRACES_SAMPLER(_ARG), OTEL_PROPAGATORS, OTEL_BSP_*, OTEL_SPAN_*_LIMIT,
 * OTEL_LOG_LEVEL, and the exporter's OTEL_EXPORTER_OTLP_[TRACES_]{ENDPOINT,
 * HEADERS, TIMEOUT, COMPRESSION, PROTOCOL} (http/protobuf, http/json, grpc).
 * Not enabled by default because the SDK's default endpoint,
 * localhost:4318, is Onset's own OTLP port.
 *
 * Off, it costs nothing: the SDK is loaded only when turned on (about 0.5 s
 * and 16 MiB), and the spans jobs.ts starts go to the API's no-op tracer.
 *
 * HTTP handling is traced by the official Fastify instrumentation
 * (@fastify/otel): it attaches itself to every Fastify instance created
 * afterwards, so startSelfTracing() must run before buildApp(). Background
 * jobs are traced by observeJobs() (jobs.ts). Only traces: the server's
 * metrics are GET /metrics and its logs are stdout.
 *
 * No loop: the OTLP ingest of Onset's own spans (sent straight to itself, or
 * back through a Collector) would be traced, exported, ingested, traced...
 * The ingest route calls skipIfOwnExport(), which drops that request's
 * spans when every resource in the body is this process.
 */
import { trace, type Span } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ExportResult } from '@opentelemetry/core';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

export const TRACER_NAME = 'onset-server';
/** Probes and scrapes would drown the interesting spans. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export interface SelfTracing {
  /** Export what is buffered now (e.g. before the process exits). */
  flush: () => Promise<void>;
  shutdown: () => Promise<void>;
}

let active: SelfTracing | null = null;
/** This process's service.instance.id as exported (OTEL_RESOURCE_ATTRIBUTES may set it). */
let ownInstanceId: string | null = null;
/** Traces of requests that ingested our own spans: exported by nobody. */
const ownExportTraces = new Set<string>();
const OWN_EXPORT_TRACES_MAX = 10_000;

function serverVersion(): string {
  try {
    return (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
        version: string;
      }
    ).version;
  } catch {
    return 'unknown';
  }
}

const listOf = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

/** Whether to load the SDK at all (it decides everything else itself). */
function selfTracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  const exporters = listOf(env.OTEL_TRACES_EXPORTER);
  if (exporters[0] === 'none') return false;
  // Validated with the other settings (config.ts, ServerEnv); read here because this runs first.
  return (env.ONSET_SELF_TRACING ?? '').trim() === 'on';
}

/**
 * The exporters OTEL_TRACES_EXPORTER names (default otlp), the OTLP one in
 * the protocol OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL names; each reads its
 * endpoint, headers, timeout and compression from the environment itself.
 */
async function exportersFromEnv(env: NodeJS.ProcessEnv): Promise<SpanExporter[]> {
  const names = listOf(env.OTEL_TRACES_EXPORTER);
  const out: SpanExporter[] = [];
  for (const name of names.length ? names : ['otlp']) {
    if (name === 'console') {
      const { ConsoleSpanExporter } = await import('@opentelemetry/sdk-trace-base');
      out.push(new ConsoleSpanExporter());
    } else if (name === 'otlp') {
      const protocol = (
        env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ||
        env.OTEL_EXPORTER_OTLP_PROTOCOL ||
        'http/protobuf'
      ).trim();
      if (protocol === 'grpc')
        out.push(new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter());
      else if (protocol === 'http/json')
        out.push(new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter());
      else
        out.push(
          new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(),
        );
    } else {
      console.error(`onset: OTEL_TRACES_EXPORTER "${name}" is not supported (otlp, console, none)`);
    }
  }
  return out;
}

/** Passes spans on, less those of requests that ingested our own export. */
class WithoutOwnExport implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}
  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    ownInstanceId ??= String(spans[0]?.resource.attributes['service.instance.id'] ?? '') || null;
    const keep = spans.filter((s) => !ownExportTraces.has(s.spanContext().traceId));
    // A request's own span ends last: its trace is done.
    for (const s of spans)
      if (!s.parentSpanContext || s.parentSpanContext.isRemote)
        ownExportTraces.delete(s.spanContext().traceId);
    if (keep.length === 0) return done({ code: 0 });
    this.inner.export(keep, done);
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

interface OtlpResourceSpans {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key?: string; value?: { stringValue?: string } }> };
  }>;
}

/**
 * Called by the OTLP traces route with the decoded request: when every
 * resource in it is this process (our own spans, sent here directly or via a
 * Collector), the request's spans are not exported. Free when tracing is off.
 */
export function skipIfOwnExport(request: unknown): void {
  if (!active || !ownInstanceId) return;
  const rs = (request as OtlpResourceSpans).resourceSpans;
  if (!rs?.length) return;
  for (const r of rs) {
    const id = r.resource?.attributes?.find((a) => a.key === 'service.instance.id');
    if (id?.value?.stringValue !== ownInstanceId) return;
  }
  skipIfOwnInstance(ownInstanceId);
}

/**
 * The same, for a request decoded elsewhere (a worker thread): `instanceId` is
 * the service.instance.id every resource of the request carries, or null.
 */
export function skipIfOwnInstance(instanceId: string | null): void {
  if (!active || !ownInstanceId || instanceId !== ownInstanceId) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  if (ownExportTraces.size >= OWN_EXPORT_TRACES_MAX) ownExportTraces.clear();
  ownExportTraces.add(span.spanContext().traceId);
}

/**
 * Start self-tracing for this process if the environment asks for it.
 * Idempotent; null when off.
 */
export async function startSelfTracing(
  env: NodeJS.ProcessEnv = process.env,
): Promise<SelfTracing | null> {
  if (active) return active;
  if (!selfTracingRequested(env)) return null;

  const [{ NodeSDK }, { BatchSpanProcessor, SimpleSpanProcessor, ConsoleSpanExporter }, res, fo] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
      import('@fastify/otel'),
    ]);
  const exporters = await exportersFromEnv(env);
  if (exporters.length === 0) return null;

  const http = new fo.FastifyOtelInstrumentation({
    registerOnInitialization: true,
    // One span per request plus one for its handler; not one per lifecycle hook.
    instrumentHooks: false,
    ignorePaths: (route: { url: string }) => UNTRACED_PATHS.has(route.url.split('?')[0]!),
    requestHook: (span: Span, request: { method: string; routeOptions: { url?: string } }) => {
      // HTTP server span names per semantic conventions: "{method} {route}".
      const route = request.routeOptions.url;
      span.updateName(route ? `${request.method} ${route}` : request.method);
    },
    lifecycleHook: (span, info) => {
      // The handler's own span, named after its route rather than its plugin.
      if (info.hookName === 'handler' && info.request.routeOptions.url)
        span.updateName(`handler ${info.request.method} ${info.request.routeOptions.url}`);
    },
  });

  const sdk = new NodeSDK({
    // The SDK's resource detectors (env among them: OTEL_SERVICE_NAME wins) merge over these.
    resource: res.defaultResource().merge(
      res.resourceFromAttributes({
        'service.name': TRACER_NAME,
        'service.version': serverVersion(),
        'service.instance.id': randomUUID(),
      }),
    ),
    spanProcessors: exporters.map((e) =>
      e instanceof ConsoleSpanExporter
        ? new SimpleSpanProcessor(e)
        : new BatchSpanProcessor(new WithoutOwnExport(e)),
    ),
    instrumentations: [http],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();

  active = {
    flush: async () => {
      // NodeSDK has no flush of its own; the provider it registered has.
      const proxy = trace.getTracerProvider() as { getDelegate?: () => unknown };
      const provider = (proxy.getDelegate?.() ?? proxy) as { forceFlush?: () => Promise<void> };
      await provider.forceFlush?.();
    },
    shutdown: async () => {
      http.disable();
      await sdk.shutdown();
      active = null;
      ownInstanceId = null;
    },
  };
  return active;
}
