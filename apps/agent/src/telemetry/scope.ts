/**
 * What traced events (bpftrace, strace) are reported: path globs to leave
 * out (the defaults in config/scope-defaults.ts when tracing the whole host,
 * plus `scope.exclude`), globs that are always reported (`scope.include`,
 * which wins), and process names to leave out (`scope.excludeProcesses`).
 * Synthetic probes are configured, so they are always reported.
 */
import picomatch from 'picomatch';
import type { AgentConfig } from '../config/schema.ts';
import { DEFAULT_EXCLUDES } from '../config/scope-defaults.ts';
import { callerOf, pathsOf } from '../caller.ts';
import { isTraced, type AgentEvent } from '../events.ts';

type Matcher = (path: string) => boolean;

const GLOB_OPTIONS = { dot: true } as const;

function matcher(globs: string[]): Matcher | undefined {
  return globs.length ? picomatch(globs, GLOB_OPTIONS) : undefined;
}

export class TraceScope {
  private readonly exclude?: Matcher;
  private readonly include?: Matcher;
  private readonly processes: Set<string>;
  /** For the log: what is left out. */
  readonly description: string;

  constructor(scope: AgentConfig['scope'], hostWide: boolean) {
    const defaults = scope.defaults && hostWide;
    const excludes = [
      ...(defaults ? DEFAULT_EXCLUDES.flatMap((d) => d.globs) : []),
      ...scope.exclude,
    ];
    this.exclude = matcher(excludes);
    this.include = matcher(scope.include);
    // The kernel keeps 15 bytes of a process name.
    this.processes = new Set(scope.excludeProcesses.map((p) => p.slice(0, 15)));
    const parts = [
      defaults ? DEFAULT_EXCLUDES.map((d) => d.why).join(' and ') : undefined,
      scope.exclude.length ? `${scope.exclude.length} configured path pattern(s)` : undefined,
      this.processes.size ? `processes ${[...this.processes].join(', ')}` : undefined,
    ].filter(Boolean);
    this.description = parts.length
      ? `leaving out ${parts.join(', ')}${scope.include.length ? ` (except ${scope.include.join(', ')})` : ''}`
      : 'reporting every traced path';
  }

  /** Why a traced event is left out, or undefined when it is reported. */
  excluded(e: AgentEvent): string | undefined {
    if (!isTraced(e)) return undefined;
    const comm = callerOf(e).comm;
    if (comm !== undefined && this.processes.has(comm)) return `process ${comm}`;
    if (!this.exclude) return undefined;
    for (const p of pathsOf(e)) {
      if (!p || !this.exclude(p)) continue;
      if (this.include && pathsOf(e).some((q) => q && this.include!(q))) return undefined;
      return p;
    }
    return undefined;
  }
}
