/**
 * The agent's bounded span queue. When the collector is away for long the
 * queue fills; then the OLDEST spans are dropped (recent data is worth more
 * when it comes back) and counted, so the loss is visible in the log.
 * Capped by span count and by approximate memory.
 */
import { approximateBytes, type SpanRecord } from './span-record.ts';

interface Slot {
  span: SpanRecord;
  bytes: number;
}

export class SpanBuffer {
  private ring: (Slot | undefined)[];
  private head = 0;
  private count = 0;
  private bytesUsed = 0;
  /** Spans dropped because the queue was full, since start. */
  dropped = 0;

  constructor(
    readonly maxSpans: number,
    readonly maxBytes: number,
  ) {
    this.ring = new Array(Math.max(1, Math.min(maxSpans, 1024)));
  }

  get length(): number {
    return this.count;
  }

  get bytes(): number {
    return this.bytesUsed;
  }

  push(span: SpanRecord): void {
    this.pushSlot({ span, bytes: approximateBytes(span) });
  }

  /** Remove up to n spans from the front (oldest first). */
  take(n: number): SpanRecord[] {
    const out: SpanRecord[] = [];
    while (out.length < n && this.count > 0) out.push(this.shift()!.span);
    return out;
  }

  /** Put spans that failed to send back at the front, keeping their order; the caps still apply. */
  returnToFront(spans: SpanRecord[]): void {
    for (let i = spans.length - 1; i >= 0; i--) {
      const slot = { span: spans[i]!, bytes: approximateBytes(spans[i]!) };
      if (this.count >= this.maxSpans || this.bytesUsed + slot.bytes > this.maxBytes) {
        // These are older than everything queued: they are the ones to drop.
        this.dropped += i + 1;
        return;
      }
      this.grow();
      this.head = (this.head - 1 + this.ring.length) % this.ring.length;
      this.ring[this.head] = slot;
      this.count++;
      this.bytesUsed += slot.bytes;
    }
  }

  private pushSlot(slot: Slot): void {
    while (
      this.count > 0 &&
      (this.count >= this.maxSpans || this.bytesUsed + slot.bytes > this.maxBytes)
    ) {
      this.shift();
      this.dropped++;
    }
    this.grow();
    this.ring[(this.head + this.count) % this.ring.length] = slot;
    this.count++;
    this.bytesUsed += slot.bytes;
  }

  private shift(): Slot | undefined {
    if (this.count === 0) return undefined;
    const slot = this.ring[this.head];
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) % this.ring.length;
    this.count--;
    this.bytesUsed -= slot!.bytes;
    return slot;
  }

  /** Double the ring when full (up to maxSpans), so an idle agent holds a small array. */
  private grow(): void {
    if (this.count < this.ring.length) return;
    const bigger: (Slot | undefined)[] = new Array(Math.min(this.maxSpans, this.ring.length * 2));
    for (let i = 0; i < this.count; i++) bigger[i] = this.ring[(this.head + i) % this.ring.length];
    this.ring = bigger;
    this.head = 0;
  }
}
