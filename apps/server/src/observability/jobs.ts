/**
 * Background jobs (graphile-worker) as spans and metrics, from the worker's
 * own events, so every task is observed without touching its code:
 * a span "job <task>" per run (when self-tracing is on) and
 * onset_jobs_total / onset_job_duration_seconds always.
 */
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { WorkerEvents } from 'graphile-worker';
import { jobRuns, jobSeconds } from './metrics.ts';
import { TRACER_NAME } from './tracing.ts';

interface Running {
  span: Span;
  started: bigint;
}

export function observeJobs(events: WorkerEvents): void {
  const tracer = trace.getTracer(TRACER_NAME);
  const running = new Map<string, Running>();

  events.on('job:start', ({ job }) => {
    const span = tracer.startSpan(`job ${job.task_identifier}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        'onset.job.task': job.task_identifier,
        'onset.job.id': String(job.id),
        'onset.job.attempt': job.attempts,
        ...(job.key ? { 'onset.job.key': job.key } : {}),
      },
    });
    running.set(String(job.id), { span, started: process.hrtime.bigint() });
  });

  events.on('job:complete', ({ job, error }) => {
    const r = running.get(String(job.id));
    running.delete(String(job.id));
    const result = error ? 'error' : 'success';
    jobRuns.inc({ task: job.task_identifier, result });
    if (!r) return;
    jobSeconds.observe(
      { task: job.task_identifier },
      Number(process.hrtime.bigint() - r.started) / 1e9,
    );
    if (error) {
      const message = error instanceof Error ? error.message : String(error);
      r.span.recordException(error instanceof Error ? error : { message });
      r.span.setStatus({ code: SpanStatusCode.ERROR, message });
    }
    r.span.end();
  });
}
