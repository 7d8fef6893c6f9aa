/**
 * Onset traces itself with the OpenTelemetry SDK, off by default: it turns on
 * when OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set, and the
 * standard OTEL_* variables configure the rest (OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_*,
 * OTEL_TRACES_SAMPLER, OTEL_SDK_DISABLED=true to force it off).
 *
 * HTTP handling is traced by the official Fastify instrumentation
 * (@fastify/otel): once enabled, it attaches itself to every Fastify instance
 * created afterwards, so startSelfTracing() must run before buildApp().
 * Background jobs are traced by observeJobs() (jobs.ts).
 */
import type { Span } from '@opentelemetry/api';
import { NodeTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { FastifyOtelInstrumentation } from '@fastify/otel';
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

function selfTracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim());
  if (exporters.includes('none')) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Start self-tracing for this process if requested by the environment (the
 * OTel SDK reads its own variables from process.env). Idempotent; null when off.
 */
export function startSelfTracing(env: NodeJS.ProcessEnv = process.env): SelfTracing | null {
  if (active) return active;
  if (!selfTracingRequested(env)) return null;

  const resource = defaultResource()
    .merge(
      resourceFromAttributes({ 'service.name': TRACER_NAME, 'service.version': serverVersion() }),
    )
    .merge(detectResources({ detectors: [hostDetector] }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the defaults.
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();

  const http = new FastifyOtelInstrumentation({
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
  http.setTracerProvider(provider);
  http.enable();

  active = {
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      http.disable();
      await provider.shutdown();
      active = null;
    },
  };
  return active;
}
