/**
 * Cluster-wide exemplar keep rates (exemplars.ts): every `intervalMs` this
 * server reads, from the histograms every server writes, how many spans a
 * minute each (series, resource) it has stored recently got over the last two
 * closed minutes, and sends each pair's keep rate to every thread that decodes
 * (a BroadcastChannel: the main thread and decode workers). Servers reading the
 * same committed counts get the same rates, so they keep the same spans.
 */
import { BroadcastChannel } from 'node:worker_threads';
import type { Pool } from '../db/pool.ts';
import { exemplarRatePairs } from '../observability/metrics.ts';
import { EXEMPLAR_RATES_CHANNEL, keepRate } from './exemplars.ts';

const MIN = 60_000;
/** Pairs remembered before they are all forgotten (the next exports bring them back). */
const MAX_PAIRS = 200_000;

export class ExemplarRates {
  /** `${seriesId}:${resourceId}` -> the pair's group key as decoding names it. */
  private readonly keyOf = new Map<string, string>();
  private readonly channel = new BroadcastChannel(EXEMPLAR_RATES_CHANNEL);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(private readonly pool: Pool) {
    this.channel.unref();
  }

  /** A pair this server stored spans of: its rate is looked up from now on. */
  note(seriesId: number, resourceId: number, groupKey: string): void {
    const k = `${seriesId}:${resourceId}`;
    if (this.keyOf.has(k)) return;
    if (this.keyOf.size >= MAX_PAIRS) this.keyOf.clear();
    this.keyOf.set(k, groupKey);
  }

  /** Read the counts and send the rates out; resolves to the number of pairs with a rate. */
  refresh(now = Date.now()): Promise<number> {
    this.running ??= this.read(now).finally(() => (this.running = null));
    return this.running;
  }

  private async read(now: number): Promise<number> {
    if (!this.keyOf.size) return 0;
    const series = [...new Set([...this.keyOf.keys()].map((k) => Number(k.split(':')[0])))];
    // The two minutes before the one just closed: late spans have mostly arrived.
    const to = Math.floor(now / MIN) * MIN - MIN;
    const { rows } = await this.pool.query<{ s: string; r: string; n: number }>(
      `SELECT series_id AS s, resource_id AS r, sum(count)::float8 / 2 AS n
         FROM histograms WHERE series_id = ANY($1::bigint[]) AND minute >= $2 AND minute < $3
        GROUP BY 1, 2`,
      [series, new Date(to - 2 * MIN), new Date(to)],
    );
    const rates = new Map<string, number>();
    for (const row of rows) {
      const key = this.keyOf.get(`${row.s}:${row.r}`);
      if (key !== undefined) rates.set(key, keepRate(row.n));
    }
    this.channel.postMessage(rates);
    exemplarRatePairs.set(rates.size);
    return rates.size;
  }

  /** Refresh now and every `intervalMs` (0: never; the first-spans rule stays in use). */
  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.timer) return;
    const tick = () => void this.refresh().catch(() => {}); // an outage keeps the last rates
    tick();
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
    this.channel.close();
  }
}
