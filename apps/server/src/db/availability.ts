/**
 * Whether PostgreSQL answers, as background work sees it. Every component
 * that meets an outage reports it here instead of logging it, so an outage of
 * any length is one warning and one "reachable again" line, not an error per
 * job per retry. While the database is away this probes it with backoff, and
 * tells its listeners when it answers again so they resume at once.
 */
import type { Pool } from './pool.ts';
import { isDatabaseUnavailable } from './pool.ts';

export interface AvailabilityLog {
  warn: (obj: object, msg: string) => void;
  info: (obj: object, msg: string) => void;
}

export interface Outage {
  since: number;
  reason: string;
  /** The component that noticed first. */
  noticedBy: string;
}

/**
 * A short, fixed description of why the database cannot be used: safe to
 * show anyone (no address, port, user or server text), enough to act on.
 */
export function outageReason(err: unknown): string {
  const e = (err ?? {}) as { code?: string; message?: string };
  const code = e.code ?? '';
  const message = e.message ?? '';
  if (code === '57P03' || /starting up|shutting down|in recovery/i.test(message))
    return 'starting up or shutting down';
  if (code === '57P01' || code === '57P02' || /administrator command/i.test(message))
    return 'restarting';
  if (code === '53300' || /too many (clients|connections)/i.test(message))
    return 'too many connections';
  if (code === '28P01' || code === '28000') return 'authentication failed';
  if (code === '3D000') return 'database does not exist';
  if (
    code === 'ETIMEDOUT' ||
    /timeout exceeded when trying to connect|connection timeout/i.test(message)
  )
    return 'connection timed out';
  if (isDatabaseUnavailable(err)) return 'unreachable';
  return 'error';
}

/** Is this error the database being away (not a bug, not bad data)? */
export function isOutage(err: unknown): boolean {
  return isDatabaseUnavailable(err) || outageReason(err) !== 'error';
}

/** First probe 0.5 s after the outage is noticed, then doubling up to this (ONSET_DB_RETRY_MAX). */
const DEFAULT_PROBE_MAX_MS = 10_000;

export class DatabaseAvailability {
  private outage: Outage | null = null;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly recovered = new Set<(downMs: number) => void>();

  constructor(
    private readonly pool: Pool,
    private readonly log: AvailabilityLog,
    private readonly probeMaxMs = DEFAULT_PROBE_MAX_MS,
  ) {}

  get current(): Outage | null {
    return this.outage;
  }

  /**
   * A component failed with `err`. Returns true when that is the database
   * being away: then it is logged (once per outage) and probing starts.
   * Other errors are the caller's to log.
   */
  report(err: unknown, component: string): boolean {
    if (!isOutage(err)) return false;
    if (this.outage || this.stopped) return true;
    this.outage = { since: Date.now(), reason: outageReason(err), noticedBy: component };
    this.log.warn(
      { reason: this.outage.reason, component, err: (err as Error)?.message },
      'database unavailable; background work paused until it answers again',
    );
    this.probe(0);
    return true;
  }

  /** Called with the outage's length once the database answers again. Returns an unsubscribe. */
  onRecovered(fn: (downMs: number) => void): () => void {
    this.recovered.add(fn);
    return () => this.recovered.delete(fn);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private probe(attempt: number): void {
    const delay = Math.min(this.probeMaxMs, 500 * 2 ** attempt);
    this.timer = setTimeout(() => {
      this.pool.query('SELECT 1').then(
        () => this.up(),
        () => {
          if (!this.stopped) this.probe(attempt + 1);
        },
      );
    }, delay);
    this.timer.unref();
  }

  private up(): void {
    const outage = this.outage;
    if (!outage || this.stopped) return;
    this.outage = null;
    const downMs = Date.now() - outage.since;
    this.log.info(
      { down_ms: downMs, reason: outage.reason },
      'database reachable again; background work resumes',
    );
    for (const fn of this.recovered) {
      try {
        fn(downMs);
      } catch {
        /* a listener's failure is its own; the others still resume */
      }
    }
  }
}
