/**
 * Series names from traced paths, with the parts that differ per run folded.
 *
 * Onset makes one series per fsync'd directory (`file.directory`) and per
 * spawned executable (`process.executable.name`). Traced host-wide, temporary
 * and per-process directories (`/tmp/tmp.Xk3Fa9`, `/proc/4242`, a
 * `mkdtemp` per test run, container ids) would each become a series of a few
 * points that never comes back. A path component that looks generated (the
 * rule lives once in @onset/core `generatedPart`, shared with the server's
 * route templating) is replaced by `*`, so those fold into one series per
 * pattern (`/tmp/tmp.*`, `/proc/*`), while the real path stays on the span
 * (`file.path`, `onset.fsync.directory`, `process.executable.path`).
 */
import { generatedPart } from '@onset/core';

/** One path component, or `*` / `prefix*` when it looks generated. */
export function normalizeComponent(name: string): string {
  const g = generatedPart(name);
  return g ? `${g.prefix}*` : name;
}

const cache = new Map<string, string>();

/** A path with its generated-looking components folded (see above). */
export function normalizePath(p: string): string {
  let out = cache.get(p);
  if (out === undefined) {
    out = p.split('/').map(normalizeComponent).join('/');
    if (cache.size >= 10_000) cache.clear();
    cache.set(p, out);
  }
  return out;
}
