/** The process an event is about: the one that made the call (the parent, for a spawn). */
import type { AgentEvent } from './events.ts';

export function callerOf(e: AgentEvent): { pid?: number; comm?: string } {
  switch (e.kind) {
    case 'spawn':
      return { pid: e.parentPid, comm: e.parentComm };
    case 'fsync':
    case 'unmount':
    case 'fsync-operation':
      return { pid: e.pid, comm: e.comm };
    case 'fsync-rate':
      return { comm: e.comm };
    case 'request':
    case 'host-cpu': // the agent's own reading of the host: no caller
      return {};
  }
}

/** The host paths an event names (directory, file, mount point, executable). */
export function pathsOf(e: AgentEvent): (string | undefined)[] {
  switch (e.kind) {
    case 'fsync':
      return [e.directory, e.path, e.mountPoint];
    case 'fsync-operation':
      return [e.directory];
    case 'unmount':
      return [e.mountPoint];
    case 'spawn':
      return [e.executable];
    case 'fsync-rate':
    case 'request':
    case 'host-cpu':
      return [];
  }
}
