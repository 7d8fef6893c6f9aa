/**
 * Counts of traced events the agent did not report, and why, logged once a
 * minute: events of processes another Onset agent reports (host/claims.ts),
 * and events outside the configured scope (telemetry/scope.ts).
 */
import type { Claim } from '../host/claims.ts';
import type { Logger } from '../log.ts';

export class LeftOut {
  private readonly byAgent = new Map<string, number>();
  private readonly byPath = new Map<string, number>();
  /** Agents already named at info level; later minutes go to debug. */
  private readonly announced = new Set<string>();
  readonly total = { otherAgents: 0, outOfScope: 0 };

  constructor(private readonly log: Logger) {}

  otherAgent(c: Claim): void {
    const k = `agent pid ${c.pid} (service ${c.service})`;
    this.byAgent.set(k, (this.byAgent.get(k) ?? 0) + 1);
    this.total.otherAgents++;
  }

  outOfScope(what: string): void {
    if (this.byPath.size < 1000 || this.byPath.has(what))
      this.byPath.set(what, (this.byPath.get(what) ?? 0) + 1);
    this.total.outOfScope++;
  }

  report(): void {
    if (this.byAgent.size) {
      const list = [...this.byAgent].map(([k, n]) => `${n} to ${k}`).join(', ');
      const line = `left ${list}: their processes are reported by that agent, not twice`;
      const fresh = [...this.byAgent.keys()].filter((k) => !this.announced.has(k));
      if (fresh.length) this.log.info(line);
      else this.log.debug(line);
      for (const k of fresh) this.announced.add(k);
      this.byAgent.clear();
    }
    if (this.byPath.size) {
      let n = 0;
      for (const v of this.byPath.values()) n += v;
      const top = [...this.byPath]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([p, c]) => `${p} (${c})`)
        .join(', ');
      this.log.debug(
        `scope: left out ${n} traced events (${this.total.outOfScope} since start), e.g. ${top}`,
      );
      this.byPath.clear();
    }
  }
}
