/**
 * Batching and delivery. Spans wait in a bounded drop-oldest queue
 * (span-buffer.ts) and go out in batches through the official OTLP exporter,
 * which itself retries 429/502/503/504 and network errors with backoff and
 * honours Retry-After within its export timeout. When an export still fails
 * (collector gone), the batch goes back to the front of the queue and the
 * pipeline backs off (1 s doubling to 30 s) before trying again; the queue
 * caps memory meanwhile. The SDK's BatchSpanProcessor is not used because it
 * drops the newest spans on overflow and discards batches whose export failed.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../log.ts';
import { SpanBuffer } from './span-buffer.ts';
import { toReadableSpan, type SpanRecord } from './span-record.ts';

export interface PipelineOptions {
  batchSize: number;
  flushIntervalMs: number;
  maxQueueSpans: number;
  maxQueueBytes: number;
  /** Upper bound for one export call (the exporter's own timeout plus slack). */
  exportTimeoutMs: number;
  /** Where the spans go, for log lines. */
  destination: string;
}

export interface PipelineStats {
  queued: number;
  queuedBytes: number;
  exported: number;
  dropped: number;
  failedExports: number;
  lastError?: string;
}

/** Programs a host-wide agent keeps a resource for; spans of more go out under the agent's own. */
const MAX_PROGRAM_RESOURCES = 2_000;

const INITIAL_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;
const DROP_LOG_EVERY_MS = 10_000;

export class SpanPipeline {
  private readonly buffer: SpanBuffer;
  private readonly scope = { name: '@onset/agent', version: '0.1.0' };
  private timer?: NodeJS.Timeout;
  private sending?: Promise<void>;
  private retryAt = 0;
  private backoffMs = INITIAL_BACKOFF_MS;
  private outageSince?: number;
  private droppedLogged = 0;
  private lastDropLog = 0;
  private stopped = false;
  private scheduled = false;
  /** Spans taken from the queue for the export in progress. */
  private inFlight = 0;
  /** The agent's resource with service.name set to a program (host-wide agents, SpanRecord.service). */
  private readonly programResources = new Map<string, Resource>();
  readonly stats: PipelineStats = {
    queued: 0,
    queuedBytes: 0,
    exported: 0,
    dropped: 0,
    failedExports: 0,
  };

  constructor(
    private readonly exporter: SpanExporter,
    private readonly resource: Resource,
    private readonly opts: PipelineOptions,
    private readonly log: Logger,
  ) {
    this.buffer = new SpanBuffer(opts.maxQueueSpans, opts.maxQueueBytes);
  }

  start(): void {
    this.timer = setInterval(() => void this.pump(), this.opts.flushIntervalMs);
    this.timer.unref();
  }

  add(span: SpanRecord): void {
    if (this.stopped) return;
    this.buffer.push(span);
    this.updateStats();
    if (this.buffer.length >= this.opts.batchSize && !this.sending && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        void this.pump();
      });
    }
  }

  /** Send what is queued now; resolves when the queue is empty or an export failed. */
  async flush(): Promise<void> {
    this.retryAt = 0;
    await this.pump();
  }

  private pump(): Promise<void> {
    if (!this.sending) {
      this.sending = this.drain().finally(() => {
        this.sending = undefined;
      });
    }
    return this.sending;
  }

  private async drain(): Promise<void> {
    while (this.buffer.length > 0 && Date.now() >= this.retryAt) {
      const batch = this.buffer.take(this.opts.batchSize);
      this.inFlight = batch.length;
      const result = await this.exportBatch(batch);
      this.inFlight = 0;
      if (result.code === ExportResultCode.SUCCESS) {
        this.stats.exported += batch.length;
        this.backoffMs = INITIAL_BACKOFF_MS;
        if (this.outageSince !== undefined) {
          const secs = ((Date.now() - this.outageSince) / 1000).toFixed(0);
          this.log.info(
            `collector ${this.opts.destination} is reachable again after ${secs}s; sending ${this.buffer.length + batch.length} queued spans`,
          );
          this.outageSince = undefined;
        }
      } else {
        this.buffer.returnToFront(batch);
        this.stats.failedExports++;
        this.stats.lastError = result.error?.message ?? 'export failed';
        this.retryAt = Date.now() + this.backoffMs;
        if (this.outageSince === undefined) {
          this.outageSince = Date.now();
          this.log.warn(
            `cannot deliver spans to ${this.opts.destination} (${this.stats.lastError}); keeping up to ${this.opts.maxQueueSpans} spans / ${mb(this.opts.maxQueueBytes)} in memory and retrying with backoff`,
          );
        } else {
          this.log.debug(
            `export still failing (${this.stats.lastError}); next try in ${this.backoffMs} ms`,
          );
        }
        this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
        break;
      }
    }
    this.updateStats();
  }

  /**
   * The resource a span goes out with: the agent's, or for a program's span the same host,
   * kernel and cohort attributes under the program's service name (the exporter groups spans
   * by resource, so a batch carries one resource per program).
   */
  private resourceOf(r: SpanRecord): Resource {
    if (!r.service) return this.resource;
    let res = this.programResources.get(r.service);
    if (!res) {
      if (this.programResources.size >= MAX_PROGRAM_RESOURCES) return this.resource;
      const attrs = { ...this.resource.attributes };
      // Who the agent's own service is (its version, its instance) says nothing of the program.
      for (const k of Object.keys(attrs)) if (k.startsWith('service.')) delete attrs[k];
      res = resourceFromAttributes({ ...attrs, 'service.name': r.service });
      this.programResources.set(r.service, res);
    }
    return res;
  }

  private exportBatch(batch: SpanRecord[]): Promise<ExportResult> {
    const spans = batch.map((r) => toReadableSpan(r, this.resourceOf(r), this.scope));
    return new Promise<ExportResult>((resolve) => {
      // The exporter always calls back, but a wedged socket must not stall the queue forever.
      const guard = setTimeout(
        () => resolve({ code: ExportResultCode.FAILED, error: new Error('export timed out') }),
        this.opts.exportTimeoutMs,
      );
      try {
        this.exporter.export(spans, (result) => {
          clearTimeout(guard);
          resolve(result);
        });
      } catch (e) {
        clearTimeout(guard);
        resolve({ code: ExportResultCode.FAILED, error: e as Error });
      }
    });
  }

  private updateStats(): void {
    this.stats.queued = this.buffer.length;
    this.stats.queuedBytes = this.buffer.bytes;
    this.stats.dropped = this.buffer.dropped;
    const newDrops = this.buffer.dropped - this.droppedLogged;
    if (newDrops > 0 && Date.now() - this.lastDropLog >= DROP_LOG_EVERY_MS) {
      this.lastDropLog = Date.now();
      this.droppedLogged = this.buffer.dropped;
      this.log.warn(
        `span queue full (${this.opts.maxQueueSpans} spans / ${mb(this.opts.maxQueueBytes)}): dropped ${newDrops} oldest spans, ${this.buffer.dropped} since start`,
      );
    }
  }

  /** Stop accepting spans, try to deliver what is queued within `timeoutMs`, then close the exporter. */
  async shutdown(timeoutMs: number): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    const deadline = Date.now() + timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    const drainAll = async () => {
      while (this.buffer.length > 0 && Date.now() < deadline) {
        if (this.sending) await this.sending;
        this.retryAt = 0;
        const before = this.stats.failedExports;
        await this.pump();
        if (this.stats.failedExports > before) break; // the collector is away: do not spin until the deadline
      }
    };
    await Promise.race([drainAll(), expired]);
    clearTimeout(timer);
    if (this.buffer.dropped > this.droppedLogged)
      this.log.warn(`dropped ${this.buffer.dropped} spans in total because the queue was full`);
    const undelivered = this.buffer.length + this.inFlight;
    if (undelivered > 0)
      this.log.warn(
        `shutting down with ${undelivered} spans undelivered to ${this.opts.destination}`,
      );
    else
      this.log.info(`flushed; ${this.stats.exported} spans delivered to ${this.opts.destination}`);
    await this.exporter.shutdown().catch(() => {});
  }
}

function mb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(0)} MiB`;
}
