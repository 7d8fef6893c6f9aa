/**
 * How many series (or resources) exist per service and in total, kept in
 * memory so admitting a new one costs a map lookup on the ingest path.
 *
 * A new entry is reserved synchronously before it is written (JavaScript runs
 * one request's admission at a time, so concurrent requests cannot both take
 * the last slot), then settled: kept when the INSERT created the row, given
 * back when the row already existed. Counts are reloaded from the database
 * now and then (other Onset processes may write too); reservations still in
 * flight, and rows created while the reload's query ran, are added on top of
 * the reloaded numbers, so a reload never opens room that is already taken
 * (it may count a row twice until the next reload: refusing early, never
 * admitting past a limit).
 */
export type LimitReason = 'service_limit' | 'global_limit';

export class Budget {
  private readonly perService = new Map<string, number>();
  private readonly pending = new Map<string, number>();
  /** Rows created since a reload's query started (null when no reload runs). */
  private createdDuringReload: Map<string, number> | null = null;
  private total = 0;

  /** 0 disables a limit. */
  constructor(
    readonly perServiceLimit: number,
    readonly globalLimit: number,
  ) {}

  /** Take one slot for a new entry of `service`, or say which limit refuses it. */
  tryReserve(service: string): LimitReason | null {
    if (this.globalLimit > 0 && this.total >= this.globalLimit) return 'global_limit';
    const n = this.perService.get(service) ?? 0;
    if (this.perServiceLimit > 0 && n >= this.perServiceLimit) return 'service_limit';
    this.perService.set(service, n + 1);
    this.pending.set(service, (this.pending.get(service) ?? 0) + 1);
    this.total++;
    return null;
  }

  /** A reservation's write finished: `created` false (the row existed, or the write failed) gives the slot back. */
  settle(service: string, created: boolean): void {
    const p = (this.pending.get(service) ?? 0) - 1;
    if (p > 0) this.pending.set(service, p);
    else this.pending.delete(service);
    if (created) {
      const during = this.createdDuringReload;
      if (during) during.set(service, (during.get(service) ?? 0) + 1);
      return;
    }
    const n = (this.perService.get(service) ?? 0) - 1;
    if (n > 0) this.perService.set(service, n);
    else this.perService.delete(service);
    this.total--;
  }

  /** Call before the reload's query: rows created from now on are kept on top of its answer. */
  beginReload(): void {
    this.createdDuringReload = new Map();
  }

  /** A reload failed: nothing to merge. */
  abortReload(): void {
    this.createdDuringReload = null;
  }

  /** Replace the counts with the database's, keeping reservations in flight and rows created meanwhile. */
  load(rows: Iterable<{ service: string; n: number }>): void {
    this.perService.clear();
    this.total = 0;
    for (const { service, n } of rows) {
      this.perService.set(service, n);
      this.total += n;
    }
    for (const extra of [this.pending, this.createdDuringReload ?? new Map<string, number>()])
      for (const [service, p] of extra) {
        this.perService.set(service, (this.perService.get(service) ?? 0) + p);
        this.total += p;
      }
    this.createdDuringReload = null;
  }

  count(service?: string): number {
    return service === undefined ? this.total : (this.perService.get(service) ?? 0);
  }

  /** Services whose own limit is reached. */
  servicesAtLimit(): string[] {
    if (this.perServiceLimit <= 0) return [];
    return [...this.perService]
      .filter(([, n]) => n >= this.perServiceLimit)
      .map(([service]) => service);
  }

  globalReached(): boolean {
    return this.globalLimit > 0 && this.total >= this.globalLimit;
  }
}
