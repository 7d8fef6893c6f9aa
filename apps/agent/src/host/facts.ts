/**
 * What the agent needs to know about the host to pick its sources. Injected
 * (not read from globals) so tests can run the real selection code as a
 * non-root user or with bpftrace/strace missing from PATH.
 */
import { accessSync, constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface HostFacts {
  uid: number;
  /** Environment the agent runs with; PATH decides which tools exist. */
  env: NodeJS.ProcessEnv;
  kernelRelease: string;
  hostname: string;
  /** OpenTelemetry `host.arch` value (amd64, arm64, ...). */
  arch: string;
}

const OTEL_ARCH: Record<string, string> = {
  x64: 'amd64',
  arm64: 'arm64',
  ia32: 'x86',
  arm: 'arm32',
  ppc64: 'ppc64',
  s390x: 's390x',
};

export function realHost(env: NodeJS.ProcessEnv = process.env): HostFacts {
  return {
    uid: process.getuid?.() ?? -1,
    env,
    kernelRelease: os.release(),
    hostname: os.hostname(),
    arch: OTEL_ARCH[process.arch] ?? process.arch,
  };
}

/** Absolute path of an executable found on the host's PATH, like `command -v`. */
export function findExecutable(host: HostFacts, name: string): string | undefined {
  for (const dir of (host.env.PATH ?? '').split(':')) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}
