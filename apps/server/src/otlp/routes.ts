import { skipIfOwnInstance } from '../observability/tracing.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Config } from '../config.ts';
import { HttpError, badRequest } from '../http/errors.ts';
import { isDatabaseUnavailable, type Pool } from '../db/pool.ts';
import type { Partitions } from '../db/partitions.ts';
import type { Registry } from './registry.ts';
import { decodeBody, mediaType, type Encoding } from './body.ts';
import {
  LogsRequest,
  LogsResponse,
  MetricsRequest,
  MetricsResponse,
  TraceResponse,
} from './protobuf.ts';
import { checkLogsJson, checkMetricsJson } from './json-schema.ts';
import { parse } from './parse.ts';
import { normalizeMetrics } from './normalize-metrics.ts';
import { storeTraces } from './store.ts';
import { FUTURE_SLACK_MS } from './normalize-traces.ts';
import { createIngestPipeline, type IngestPipeline } from './pipeline.ts';
import { storeMetricPoints } from './store-metrics.ts';
import type { IngestStats } from './stats.ts';
import { statusErrorBodies } from './status.ts';

export interface OtlpDeps {
  config: Config;
  pool: Pool;
  registry: Registry;
  partitions: Partitions;
  stats: IngestStats;
  /** Decode pool and group committer shared by the server's listeners; made here when absent. */
  ingest?: IngestPipeline;
  /** Called after data was committed (the scheduler uses it to know there is new data). */
  onIngested?: (kind: 'traces' | 'metrics', count: number) => void;
}

/** Requests allowed to be in flight before new ones get 429 + Retry-After. */
const MAX_IN_FLIGHT = 64;

function respond(
  reply: FastifyReply,
  encoding: Encoding,
  codec: { encode(m: unknown): { finish(): Uint8Array }; fromObject(o: unknown): unknown },
  rejectedField: 'rejectedSpans' | 'rejectedDataPoints' | 'rejectedLogRecords',
  rejected: number,
  reasons: string[],
): FastifyReply {
  const partial =
    rejected > 0 ? { [rejectedField]: rejected, errorMessage: reasons.join('; ') } : undefined;
  if (encoding === 'json') {
    const body = partial
      ? { partialSuccess: { ...partial, [rejectedField]: String(rejected) } }
      : {};
    return reply.status(200).type('application/json').send(body);
  }
  const msg = codec.fromObject(partial ? { partialSuccess: partial } : {});
  return reply
    .status(200)
    .type('application/x-protobuf')
    .send(Buffer.from(codec.encode(msg).finish()));
}

/** Items dropped by the cardinality guard are refused like invalid ones (OTLP partial success). */
function withDrops(reasons: string[], dropped: number, what: string): string[] {
  if (!dropped) return reasons;
  return [
    ...reasons,
    `${dropped} ${what} dropped: their series would exceed a cardinality limit (GET /api/v1/limits)`,
  ];
}

export async function otlpRoutes(app: FastifyInstance, deps: OtlpDeps): Promise<void> {
  const { config, pool, registry, partitions, stats } = deps;
  let inFlight = 0;
  // Trace exports are decoded in worker threads and their spans written in shared transactions.
  let ingestPipeline = deps.ingest;
  if (!ingestPipeline) {
    const own = createIngestPipeline(pool, partitions, config.ingestWorkers, config.ingestWriters);
    own.rates.start(config.exemplarRateIntervalMs);
    app.addHook('onClose', async () => {
      await own.rates.stop();
      await own.decoder.close();
    });
    ingestPipeline = own;
  }
  const { decoder, writer, rates } = ingestPipeline;

  // OTLP bodies are read raw here (any type; 415 is decided per route) and
  // decoded after decompression, where the real size limit applies.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: config.maxBodyBytes },
    (_req, body, done) => done(null, body),
  );
  // Refusals are google.rpc.Status bodies, as OTLP/HTTP clients expect.
  statusErrorBodies(app);

  const ingest = async (
    request: FastifyRequest,
    reply: FastifyReply,
    kind: 'traces' | 'metrics',
  ) => {
    const encoding = mediaType(request.headers['content-type']);
    if (inFlight >= MAX_IN_FLIGHT) {
      stats.rejected('overloaded', 1);
      throw new HttpError(
        429,
        'overloaded',
        'too many concurrent exports; retry after the delay',
        1,
      );
    }
    inFlight++;
    try {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const body = await decodeBody(raw, request.headers['content-encoding'], config.maxBodyBytes);
      const now = Date.now();
      const window = {
        oldestMs: now - config.histogramRetentionMs,
        newestMs: now + FUTURE_SLACK_MS,
      };
      if (kind === 'traces') {
        const norm = await decoder.decode(body, encoding, {
          ...window,
          maxDurationMs: config.maxSpanDurationMs,
          maxAttributes: config.maxAttributesPerSpan,
        });
        if (!norm.ok) throw new HttpError(norm.status, norm.code, norm.message);
        skipIfOwnInstance(norm.instanceId);
        if (norm.rejected > 0) stats.rejected('invalid_span', norm.rejected);
        if (norm.rowCount === 0 && norm.rejected > 0)
          throw badRequest(`all ${norm.rejected} spans were rejected: ${norm.reasons.join('; ')}`);
        const res = await storeTraces(writer, registry, partitions, norm, rates);
        stats.accepted('spans', res.inserted, res.duplicates);
        deps.onIngested?.('traces', res.inserted);
        return respond(
          reply,
          encoding,
          TraceResponse,
          'rejectedSpans',
          norm.rejected + res.dropped,
          withDrops(norm.reasons, res.dropped, 'spans'),
        );
      }
      const req = parse(
        body,
        encoding,
        MetricsRequest,
        checkMetricsJson,
        'ExportMetricsServiceRequest',
      );
      const norm = normalizeMetrics(req as never, {
        ...window,
        maxAttributes: config.maxAttributesPerSpan,
      });
      if (norm.rejected > 0) stats.rejected('invalid_data_point', norm.rejected);
      if (norm.points.length === 0 && norm.rejected > 0)
        throw badRequest(
          `all ${norm.rejected} data points were rejected: ${norm.reasons.join('; ')}`,
        );
      const { stored, dropped, covered } = await storeMetricPoints(
        pool,
        registry,
        partitions,
        norm.points,
      );
      stats.accepted('data_points', norm.points.length - dropped, 0);
      // Calls the metrics describe that the same series' spans already count (store-metrics.ts).
      if (covered) stats.accepted('metric_calls', 0, covered);
      deps.onIngested?.('metrics', stored);
      return respond(
        reply,
        encoding,
        MetricsResponse,
        'rejectedDataPoints',
        norm.rejected + dropped,
        withDrops(norm.reasons, dropped, 'data points'),
      );
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        stats.rejected('database_unavailable', 1);
        throw new HttpError(
          503,
          'unavailable',
          'the database is unreachable; nothing was stored, retry later',
          5,
        );
      }
      throw err;
    } finally {
      inFlight--;
    }
  };

  const schema = (summary: string) => ({
    summary,
    tags: ['ingest'],
    description:
      'OTLP/HTTP export. Body: application/x-protobuf or application/json (OTLP JSON mapping), optionally gzip, zstd, snappy, x-snappy-framed, zlib, deflate or lz4. ' +
      '200 only after the data is committed; partialSuccess lists refused items.',
    consumes: ['application/x-protobuf', 'application/json'],
    response: { 200: Type.Any({ description: 'Export*ServiceResponse in the request encoding' }) },
  });
  app.post(
    '/v1/traces',
    { logLevel: 'warn', schema: schema('Receive OTLP traces'), config: { scope: 'ingest' } },
    (req, reply) => ingest(req, reply, 'traces'),
  );
  // SDKs and agents export logs to the same endpoint by default (the Java agent does). Onset
  // stores none: a 404 would make them warn on every export and some retry; a 200 whose partial
  // success counts every record as refused is what OTLP says a receiver that drops data answers.
  app.post(
    '/v1/logs',
    {
      logLevel: 'warn',
      schema: schema('Receive OTLP logs: counted and refused (Onset stores no logs)'),
      config: { scope: 'ingest' },
    },
    async (req, reply) => {
      const encoding = mediaType(req.headers['content-type']);
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const body = await decodeBody(raw, req.headers['content-encoding'], config.maxBodyBytes);
      const records = countLogRecords(
        parse(body, encoding, LogsRequest, checkLogsJson, 'ExportLogsServiceRequest'),
      );
      if (records > 0) stats.rejected('log_record', records);
      return respond(reply, encoding, LogsResponse, 'rejectedLogRecords', records, [
        `Onset stores traces and metrics, not logs: ${records} log records were dropped ` +
          '(set OTEL_LOGS_EXPORTER=none to stop sending them)',
      ]);
    },
  );
  app.post(
    '/v1/metrics',
    {
      logLevel: 'warn',
      schema: schema('Receive OTLP latency histograms'),
      config: { scope: 'ingest' },
    },
    (req, reply) => ingest(req, reply, 'metrics'),
  );
}

/** Log records in a decoded ExportLogsServiceRequest (protobuf or OTLP JSON, same shape). */
function countLogRecords(req: unknown): number {
  const resources = (req as { resourceLogs?: unknown[] | null }).resourceLogs ?? [];
  let n = 0;
  for (const r of resources)
    for (const scope of (r as { scopeLogs?: unknown[] | null }).scopeLogs ?? [])
      n += ((scope as { logRecords?: unknown[] | null }).logRecords ?? []).length;
  return n;
}
