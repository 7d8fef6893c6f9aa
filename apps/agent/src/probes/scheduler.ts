/**
 * Runs the synthetic probes in rounds: the first round at once (so a new
 * user sees numbers within seconds), then every interval. Probes in a round
 * run one after another so they do not disturb each other's timings; a round
 * still running when the next is due is not doubled up.
 */
import type { EventSink } from '../events.ts';
import type { Logger } from '../log.ts';
import type { Probe } from './probe.ts';

export class ProbeScheduler {
  private timer?: NodeJS.Timeout;
  private current?: Promise<void>;
  private stopped = false;
  rounds = 0;

  constructor(
    private readonly probes: Probe[],
    private readonly intervalMs: number,
    private readonly emit: EventSink,
    private readonly log: Logger,
  ) {}

  start(): void {
    void this.round();
    this.timer = setInterval(() => void this.round(), this.intervalMs);
  }

  /** One round now (used by --once); resolves when it is done. */
  round(): Promise<void> {
    if (this.current || this.stopped) return this.current ?? Promise.resolve();
    this.current = (async () => {
      for (const probe of this.probes) {
        if (this.stopped) break;
        try {
          await probe.run(this.emit);
        } catch (e) {
          this.log.warn(`probe ${probe.name} failed: ${(e as Error).message}`);
        }
      }
      this.rounds++;
    })().finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.current;
    for (const probe of this.probes) await probe.cleanup?.().catch(() => {});
  }
}
