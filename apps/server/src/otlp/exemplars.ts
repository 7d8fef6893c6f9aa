/**
 * Which spans keep their attributes as evidence exemplars (docs/storage.md).
 * Every span is stored (dedup, pairing, SLO counts, histograms), but writing
 * each one's attributes and indexing it by series and time was most of
 * PostgreSQL's work per span. Evidence (exemplar traces, attribute lifts,
 * hints) needs a spread of calls per series around an onset, not all of them.
 *
 * The choice must not depend on which server a load balancer sent an export
 * to, so it is made from the span's trace id: `traceUnit` maps it to [0, 1),
 * and a span is kept when that is under its (series, resource)'s keep rate.
 * The rate is `exemplarTarget(n) / n` for the n spans a minute the whole
 * cluster stored for that pair over the last closed minutes (exemplar-rates.ts
 * reads them from the histograms every server writes), so every server keeps
 * the same spans and a minute gets about `exemplarTarget(n)` exemplars however
 * many servers share it; whole traces are kept together. Before a pair's rate
 * is known (a new pair, a server just started) a server keeps the first
 * `first` spans of each (pair, minute) it sees, then the n-th when its unit is
 * under first / n. Either way a span is also kept when its unit is the lowest
 * this server has seen for that (pair, minute): every (pair, minute) with
 * spans has exemplars, the minute's lowest-unit span always among them, at a
 * cost of about ln(n) + 1 more per server and minute.
 */
export const EXEMPLARS_FIRST = 20;
/** The BroadcastChannel keep rates go out on, to every thread that decodes. */
export const EXEMPLAR_RATES_CHANNEL = 'onset-exemplar-rates';
/** Counters kept before they are all forgotten (a new minute starts them again). */
const MAX_COUNTERS = 50_000;

/**
 * Exemplars a (series, resource) gets in a minute of n spans: all of a quiet
 * one's, about first × (1 + ln(n / first)) of a busy one's (~200 of 200,000).
 */
export function exemplarTarget(n: number, first = EXEMPLARS_FIRST): number {
  return n <= first ? n : first * (1 + Math.log(n / first));
}

/** The keep rate of a pair that stores n spans a minute. */
export function keepRate(n: number, first = EXEMPLARS_FIRST): number {
  return n <= 0 ? 1 : Math.min(1, exemplarTarget(n, first) / n);
}

/** A trace id's place in [0, 1): FNV-1a over its bytes (ids need not be random). */
export function traceUnit(traceId: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < traceId.length; i++) {
    h ^= traceId[i]!;
    h = Math.imul(h, 0x01000193);
  }
  // A final avalanche so that ids differing only in their last byte spread out.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return (h >>> 0) / 4294967296;
}

export interface ExemplarCounter {
  /** Spans of this (pair, minute) seen by this server. */
  n: number;
  /** The lowest unit seen so far. */
  low: number;
  /** The pair's cluster-wide keep rate, when known. */
  rate: number | undefined;
}

export class ExemplarSampler {
  /**
   * Counters by group key, then minute: the long group key is hashed once per lookup (its
   * hash stays on the string) instead of a minute-prefixed copy of it built per (group, minute).
   */
  private readonly counts = new Map<string, ExemplarGroup>();
  private size = 0;
  private rates = new Map<string, number>();

  constructor(private readonly first = EXEMPLARS_FIRST) {}

  /** Keep rates by group key (decode-traces.ts); minutes already counted keep theirs. */
  setRates(rates: Map<string, number>): void {
    this.rates = rates;
  }

  /** The counter of one (group, minute): callers keep it while their spans stay in that minute. */
  counter(groupKey: string, minute: number): ExemplarCounter {
    return this.group(groupKey).counter(minute);
  }

  /**
   * One group's counters, found by minute number: an export looks its group key up once, not
   * once per (group, minute) it touches.
   */
  group(groupKey: string): ExemplarGroup {
    let g = this.counts.get(groupKey);
    if (!g) this.counts.set(groupKey, (g = new ExemplarGroup(this, groupKey)));
    return g;
  }

  /** A new counter of one of `g`'s minutes (ExemplarGroup); past the cap every other is forgotten. */
  made(g: ExemplarGroup): ExemplarCounter {
    if (this.size >= MAX_COUNTERS) {
      // A new minute starts them again; a group a caller still holds stays, emptied.
      for (const other of this.counts.values()) other.minutes.clear();
      this.counts.clear();
      this.counts.set(g.key, g);
      this.size = 0;
    }
    this.size++;
    return { n: 0, low: 1, rate: this.rates.get(g.key) };
  }

  /** Count one more span of this counter's minute (`unit`: traceUnit of its trace id); true when it is kept. */
  keep(c: ExemplarCounter, unit: number): boolean {
    const n = ++c.n;
    const lowest = unit < c.low;
    if (lowest) c.low = unit;
    if (c.rate !== undefined) return unit < c.rate || lowest;
    return n <= this.first || unit * n < this.first || lowest;
  }
}

/** The exemplar counters of one (series, resource) group, by minute (ExemplarSampler.group). */
export class ExemplarGroup {
  readonly minutes = new Map<number, ExemplarCounter>();

  constructor(
    private readonly sampler: ExemplarSampler,
    readonly key: string,
  ) {}

  counter(minute: number): ExemplarCounter {
    let c = this.minutes.get(minute);
    if (!c) {
      c = this.sampler.made(this);
      this.minutes.set(minute, c);
    }
    return c;
  }
}
