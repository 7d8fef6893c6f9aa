/**
 * The program a traced event belongs to, which a host-wide agent reports as
 * the event's service: the systemd service of its cgroup (`postgresql.service`
 * -> `postgresql`, `app@2.service` -> `app@2`), else its executable name. A
 * host-wide agent sees every program on the host; under the agent's own name
 * their regressions would all be `onset-agent`'s, with no marker of the
 * program ever matching them.
 */
import type { AgentEvent } from '../events.ts';
import { callerOf } from '../caller.ts';
import { cgroupOf } from './claims.ts';

/** Pids remembered (pids are reused: the entry also keeps the name it was read under). */
const MAX_PIDS = 4096;

const SERVICE_UNIT = /\/([^/]+)\.service$/;

/** The systemd service a cgroup path names, if it is one (scopes and slices are not programs). */
export function serviceUnitOf(cgroup: string | undefined): string | undefined {
  return cgroup ? SERVICE_UNIT.exec(cgroup)?.[1] : undefined;
}

export class ProgramNames {
  private readonly byPid = new Map<number, { comm: string | undefined; name: string }>();

  constructor(private readonly cgroupOfPid: (pid: number) => string | undefined = cgroupOf) {}

  /** The event's program name, or undefined when the event names no process. */
  of(e: AgentEvent): string | undefined {
    const { pid, comm } = callerOf(e);
    if (pid === undefined) return comm || undefined;
    const known = this.byPid.get(pid);
    if (known && known.comm === comm) return known.name;
    const name = serviceUnitOf(this.cgroupOfPid(pid)) ?? comm;
    if (!name) return undefined;
    this.byPid.delete(pid);
    this.byPid.set(pid, { comm, name });
    if (this.byPid.size > MAX_PIDS) this.byPid.delete(this.byPid.keys().next().value!);
    return name;
  }
}
