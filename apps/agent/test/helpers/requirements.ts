/**
 * What the tests that run the real agent on real system calls need: Linux, root and bpftrace on
 * PATH. One rule for every such test file; each skips with this reason where it is missing.
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Why the real bpftrace agent cannot run here, or null when it can. */
export function bpftraceSkipReason(): string | null {
  if (process.platform !== 'linux') return 'needs Linux';
  if (process.getuid?.() !== 0) return 'needs root (bpftrace)';
  const found = (process.env.PATH ?? '').split(':').some((dir) => {
    try {
      accessSync(path.join(dir, 'bpftrace'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  return found ? null : 'needs bpftrace on PATH (Debian package bpftrace)';
}
