/**
 * A cap on new series per minute from traced events. Onset makes a series per
 * (op, view, name) of a service (the agent's, or a host-wide agent's program) (named by @onset/core's own classification,
 * so the agent counts exactly what the server will create); a host-wide trace
 * that meets a burst of fresh paths (a test run's temporary directories, a
 * build) would otherwise add hundreds in a minute. Spans of series already
 * seen always pass; spans of a new series past the cap are dropped, counted,
 * and logged once a minute with examples.
 */
import { classifyOp, classifyView, observationName, type Attributes } from '@onset/core';
import type { SpanRecord } from './span-record.ts';

const MINUTE_MS = 60_000;
/** Series remembered; beyond this the least recently seen is forgotten (and counts as new again). */
const MAX_KNOWN = 20_000;

export interface CapReport {
  droppedSpans: number;
  droppedSeries: number;
  examples: string[];
  totalDroppedSpans: number;
}

export class SeriesCap {
  private readonly known = new Map<string, true>();
  private windowStart = 0;
  private newInWindow = 0;
  private readonly refused = new Map<string, number>();
  totalDroppedSpans = 0;

  constructor(
    private readonly maxNewPerMinute: number,
    private readonly onReport: (r: CapReport) => void,
    private readonly now: () => number = Date.now,
  ) {}

  static key(span: SpanRecord): string {
    const attrs = span.attributes as Attributes;
    const op = classifyOp(span.name, attrs);
    const view = classifyView(span.kind);
    const series = `${op} ${view} ${observationName(op, span.name, attrs, view)}`;
    return span.service ? `${span.service}: ${series}` : series;
  }

  /** True when the span may be sent. */
  admit(span: SpanRecord): boolean {
    const t = this.now();
    if (t - this.windowStart >= MINUTE_MS) this.rollOver(t);
    const key = SeriesCap.key(span);
    if (this.known.has(key)) {
      this.known.delete(key); // Map order doubles as least-recently-seen order
      this.known.set(key, true);
      return true;
    }
    if (this.newInWindow >= this.maxNewPerMinute) {
      this.refused.set(key, (this.refused.get(key) ?? 0) + 1);
      this.totalDroppedSpans++;
      return false;
    }
    this.newInWindow++;
    this.known.set(key, true);
    if (this.known.size > MAX_KNOWN) this.known.delete(this.known.keys().next().value!);
    return true;
  }

  /** Report the minute that ended (if anything was dropped) and start a new one. */
  private rollOver(t: number): void {
    if (this.refused.size) {
      let spans = 0;
      for (const n of this.refused.values()) spans += n;
      this.onReport({
        droppedSpans: spans,
        droppedSeries: this.refused.size,
        examples: [...this.refused.keys()].slice(0, 3),
        totalDroppedSpans: this.totalDroppedSpans,
      });
      this.refused.clear();
    }
    this.windowStart = t;
    this.newInWindow = 0;
  }

  /** Report now (shutdown, tests). */
  flush(): void {
    this.rollOver(this.now());
  }
}
