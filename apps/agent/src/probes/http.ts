/**
 * Request probe (incident 4): call configured HTTP targets and record the
 * caller's view: the full client-side duration (until the body is read) and
 * any Server-Timing the target reports. A W3C traceparent header goes along,
 * so an instrumented target's server span pairs with this client span and
 * Onset can show the gap between the two views.
 */
import type { HttpTarget } from '../config/schema.ts';
import type { EventSink } from '../events.ts';
import { monotonicToEpochNs } from '../host/clock.ts';
import { newSpanId, newTraceId } from '../telemetry/ids.ts';
import type { Availability, Probe } from './probe.ts';
import { parseServerTiming } from './server-timing.ts';

export class HttpProbe implements Probe {
  readonly name = 'http';

  constructor(private readonly targets: HttpTarget[]) {}

  check(): Availability {
    if (this.targets.length === 0)
      return {
        ok: false,
        reason: 'no targets configured (--http-target URL or probes.http.targets)',
      };
    return { ok: true, detail: this.targets.map((t) => `${t.method} ${t.url}`).join(', ') };
  }

  async run(emit: EventSink): Promise<void> {
    for (const target of this.targets) await this.call(emit, target);
  }

  private async call(emit: EventSink, target: HttpTarget): Promise<void> {
    const traceId = newTraceId();
    const spanId = newSpanId();
    const t0 = process.hrtime.bigint();
    let statusCode: number | undefined;
    let serverTimingHeader: string | undefined;
    let error: string | undefined;
    try {
      const res = await fetch(target.url, {
        method: target.method,
        headers: { ...target.headers, traceparent: `00-${traceId}-${spanId}-01` },
        signal: AbortSignal.timeout(target.timeoutMs),
        redirect: 'manual',
      });
      await res.arrayBuffer(); // the caller waits for the whole body
      statusCode = res.status;
      serverTimingHeader = res.headers.get('server-timing') ?? undefined;
      if (res.status >= 500) error = `HTTP ${res.status}`;
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      error =
        err.name === 'TimeoutError'
          ? `timed out after ${target.timeoutMs} ms`
          : (err.cause?.code ?? err.cause?.message ?? err.message);
    }
    const t1 = process.hrtime.bigint();
    emit({
      kind: 'request',
      source: 'probe',
      probe: 'http',
      label: target.name,
      startNs: monotonicToEpochNs(t0),
      durationNs: Number(t1 - t0),
      method: target.method,
      url: target.url,
      statusCode,
      serverTiming: parseServerTiming(serverTimingHeader),
      serverTimingHeader,
      traceId,
      spanId,
      error,
    });
  }
}
