/**
 * How many series (or resources) exist per service and in total, kept in
 * memory so admitting a new one costs a map lookup on the ingest path.
 *
 * A new entry is reserved synchronously before it is written (JavaScript runs
 * one request's admission at a time, so concurrent requests cannot both take
 * the last slot), then settled: kept when the INSERT created the row, given
 * back when the row already existed. Counts are reloaded from the database
 * now and then (other Onset processes may write too); reservations still in
 * flight, and rows created while the reload's query ran that its snapshot
 * does not see (told by the creating transaction's id), are added on top of
 * the reloaded numbers, so a reload neither opens room that is taken nor
 * counts a row twice.
 */
export type LimitReason = 'service_limit' | 'global_limit';

export class Budget {
  private readonly perService = new Map<string, number>();
  private readonly pending = new Map<string, number>();
  /** Rows created since a reload's query started, with their transaction ids (null when no reload runs). */
  private createdDuringReload: Array<{ service: string; xid: bigint | null }> | null = null;
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

  /**
   * A reservation's write finished: `created` false (the row existed, or the write failed) gives the
   * slot back. `xid` is the creating transaction (pg_current_xact_id()), for reloads running meanwhile.
   */
  settle(service: string, created: boolean, xid: bigint | null = null): void {
    const p = (this.pending.get(service) ?? 0) - 1;
    if (p > 0) this.pending.set(service, p);
    else this.pending.delete(service);
    if (created) {
      this.createdDuringReload?.push({ service, xid });
      return;
    }
    const n = (this.perService.get(service) ?? 0) - 1;
    if (n > 0) this.perService.set(service, n);
    else this.perService.delete(service);
    this.total--;
  }

  /** Call before the reload's query: rows created from now on are kept on top of its answer. */
  beginReload(): void {
    this.createdDuringReload = [];
  }

  /** A reload failed: nothing to merge. */
  abortReload(): void {
    this.createdDuringReload = null;
  }

  /**
   * Replace the counts with the database's (read under `snapshot`, pg_current_snapshot() text),
   * keeping reservations in flight and the rows created meanwhile that the snapshot does not see.
   */
  load(rows: Iterable<{ service: string; n: number }>, snapshot: string | null = null): void {
    this.perService.clear();
    this.total = 0;
    const add = (service: string, n: number) => {
      this.perService.set(service, (this.perService.get(service) ?? 0) + n);
      this.total += n;
    };
    for (const { service, n } of rows) add(service, n);
    for (const [service, p] of this.pending) add(service, p);
    const seen = snapshot ? visibleIn(snapshot) : () => false;
    for (const c of this.createdDuringReload ?? [])
      if (c.xid === null || !seen(c.xid)) add(c.service, 1);
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

/** Whether a committed transaction's effects are visible in a PostgreSQL snapshot `xmin:xmax:xip,…`. */
export function visibleIn(snapshot: string): (xid: bigint) => boolean {
  const [xmin, xmax, xip] = snapshot.split(':');
  const lo = BigInt(xmin!);
  const hi = BigInt(xmax!);
  const running = new Set((xip ?? '').split(',').filter(Boolean).map(BigInt));
  return (xid) => xid < lo || (xid < hi && !running.has(xid));
}
