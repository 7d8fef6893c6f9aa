/** OTLP/HTTP JSON export of the fleet's spans: spans grouped by resource, a few requests in flight. */
import type { SpanOut } from './fleet.ts';

const nanos = (ms: number): string => `${Math.round(ms * 1000)}000`;

function attrList(attrs: Record<string, string | number>): string {
  const parts: string[] = [];
  for (const [key, v] of Object.entries(attrs))
    parts.push(
      typeof v === 'number'
        ? `{"key":${JSON.stringify(key)},"value":{"intValue":"${Math.round(v)}"}}`
        : `{"key":${JSON.stringify(key)},"value":{"stringValue":${JSON.stringify(v)}}}`,
    );
  return `[${parts.join(',')}]`;
}

function spanJson(s: SpanOut): string {
  return (
    `{"traceId":"${s.traceId}","spanId":"${s.spanId}"` +
    (s.parentId ? `,"parentSpanId":"${s.parentId}"` : '') +
    `,"name":${JSON.stringify(s.name)},"kind":${s.kind}` +
    `,"startTimeUnixNano":"${nanos(s.startMs)}","endTimeUnixNano":"${nanos(s.startMs + s.durMs)}"` +
    `,"attributes":${attrList(s.attrs)}}`
  );
}

/** Spans grouped by resource (the generator hands out one object per resource state). */
export class Batch {
  private readonly groups = new Map<Record<string, string>, string[]>();
  size = 0;

  add(resource: Record<string, string>, span: SpanOut): void {
    let g = this.groups.get(resource);
    if (!g) this.groups.set(resource, (g = []));
    g.push(spanJson(span));
    this.size++;
  }

  body(): string {
    const rs: string[] = [];
    for (const [resource, spans] of this.groups)
      rs.push(
        `{"resource":{"attributes":${attrList(resource)}},"scopeSpans":[{"scope":{"name":"onset-eval-fleet"},"spans":[${spans.join(',')}]}]}`,
      );
    return `{"resourceSpans":[${rs.join(',')}]}`;
  }
}

export interface ExportStats {
  requests: number;
  spans: number;
  rejected: number;
}

/** POST one batch; retries the OTLP retryable answers (429, 503) like an exporter. */
export async function exportBatch(
  otlpUrl: string,
  batch: Batch,
  stats: ExportStats,
  headers: Record<string, string> = {},
): Promise<void> {
  const body = batch.body();
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${otlpUrl}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    const text = await res.text();
    if ((res.status === 429 || res.status === 503) && attempt < 20) {
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
      continue;
    }
    if (res.status !== 200)
      throw new Error(`OTLP export answered ${res.status}: ${text.slice(0, 300)}`);
    const parsed = JSON.parse(text || '{}') as {
      partialSuccess?: { rejectedSpans?: string | number };
    };
    stats.requests++;
    stats.spans += batch.size;
    stats.rejected += Number(parsed.partialSuccess?.rejectedSpans ?? 0);
    return;
  }
}
