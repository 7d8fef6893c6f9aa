/**
 * A host-wide agent names a traced event's service after its program: the
 * systemd service of the process's cgroup, else its executable name; the
 * spawner for a spawn. Names are remembered per pid, and a reused pid (a new
 * executable name) is looked up again.
 */
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../src/events.ts';
import { ProgramNames, serviceUnitOf } from '../src/host/programs.ts';

const fsync = (pid: number, comm: string): AgentEvent => ({
  kind: 'fsync',
  source: 'bpftrace',
  call: 'fsync',
  startNs: 0n,
  durationNs: 1,
  pid,
  comm,
});

describe('the program of a traced event', () => {
  it('is the systemd service of its cgroup, not a slice, scope or container scope', () => {
    expect(serviceUnitOf('/system.slice/postgresql@15-main.service')).toBe('postgresql@15-main');
    expect(serviceUnitOf('/system.slice/nginx.service')).toBe('nginx');
    expect(serviceUnitOf('/user.slice/user-0.slice/session-3.scope')).toBeUndefined();
    expect(serviceUnitOf('/system.slice/docker-0123abcd.scope')).toBeUndefined();
    expect(serviceUnitOf('/')).toBeUndefined();
    expect(serviceUnitOf(undefined)).toBeUndefined();
  });

  it('falls back to the executable name, and is the parent for a spawn', () => {
    const cgroups: Record<number, string> = { 10: '/system.slice/billing.service', 11: '/' };
    const names = new ProgramNames((pid) => cgroups[pid]);
    expect(names.of(fsync(10, 'java'))).toBe('billing');
    expect(names.of(fsync(11, 'pg_ctl'))).toBe('pg_ctl');
    const spawn: AgentEvent = {
      kind: 'spawn',
      source: 'bpftrace',
      startNs: 0n,
      durationNs: 1,
      executable: '/usr/bin/true',
      pid: 99,
      parentPid: 10,
      parentComm: 'java',
    };
    expect(names.of(spawn)).toBe('billing');
    const rate: AgentEvent = {
      kind: 'fsync-rate',
      source: 'bpftrace',
      startNs: 0n,
      durationNs: 1,
      comm: 'etcd',
      windowMs: 60_000,
      calls: 3,
      syscallNs: 10,
      processes: 1,
    };
    expect(names.of(rate)).toBe('etcd');
  });

  it('reads a pid once, and again when the pid now runs another executable', () => {
    let reads = 0;
    const cgroups: Record<number, string> = { 7: '/system.slice/a.service' };
    const names = new ProgramNames((pid) => {
      reads++;
      return cgroups[pid];
    });
    expect(names.of(fsync(7, 'a'))).toBe('a');
    expect(names.of(fsync(7, 'a'))).toBe('a');
    expect(reads).toBe(1);
    cgroups[7] = '/system.slice/b.service';
    expect(names.of(fsync(7, 'b'))).toBe('b');
    expect(reads).toBe(2);
  });
});
