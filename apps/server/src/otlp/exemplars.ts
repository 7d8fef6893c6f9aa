/**
 * Which spans keep their attributes as evidence exemplars (docs/scaling.md).
 * Every span is stored (dedup, pairing, SLO counts, histograms), but writing
 * each one's attributes and indexing it by series and time was most of
 * PostgreSQL's work per span. Evidence (exemplar traces, attribute lifts,
 * hints) needs a spread of calls per series around an onset, not all of them:
 * per (series, resource, start minute) this process keeps the first `first`
 * spans, then each further one with probability first / n (the n-th of that
 * minute). A quiet series keeps every span; a busy one about
 * first × (1 + ln(n / first)) a minute (~200 of 200,000), spread across it.
 */
export const EXEMPLARS_FIRST = 20;
/** Counters kept before they are all forgotten (a new minute starts them again). */
const MAX_COUNTERS = 50_000;

export class ExemplarSampler {
  private readonly counts = new Map<string, { n: number }>();

  constructor(
    private readonly first = EXEMPLARS_FIRST,
    private readonly random: () => number = Math.random,
  ) {}

  /** The counter of one (group, minute): callers keep it while their spans stay in that minute. */
  counter(groupKey: string, minute: number): { n: number } {
    const key = `${minute}\u0003${groupKey}`;
    let c = this.counts.get(key);
    if (!c) {
      if (this.counts.size >= MAX_COUNTERS) this.counts.clear();
      this.counts.set(key, (c = { n: 0 }));
    }
    return c;
  }

  /** Count one more span of this counter's minute; true when it is kept as an exemplar. */
  keep(c: { n: number }): boolean {
    const n = ++c.n;
    return n <= this.first || this.random() * n < this.first;
  }
}
