/**
 * Onset's own noise (docs/regressions.md "Onset's own noise"): a series that
 * measures Onset itself rather than the user's software. The host agent's
 * synthetic probes mark their spans `onset.source=probe` (docs/agent.md); a
 * host-wide agent also traces Onset's own embedded PostgreSQL, whose fsyncs and
 * files lie under Onset's data directory. A step on such a series is kept out
 * of every other incident (core's sameIncident) and never pages; it is still
 * shown, marked as Onset's own. Pure: the detection pass reads a few of the
 * series' stored spans (exemplars keep their attributes) and asks this.
 */
import type { OnsetOwn } from './incidents.ts';

/** Span attributes that name a path a series' calls touched (agent spans, docs/agent.md). */
const PATH_ATTRS = [
  'file.directory',
  'file.path',
  'onset.fsync.directory',
  'fs.mountpoint',
  'onset.unmount.path',
] as const;

/** Whether `p` is `dir` or lies under it. */
function under(p: string, dir: string): boolean {
  const d = dir.replace(/\/+$/, '');
  return d !== '' && (p === d || p.startsWith(`${d}/`));
}

/**
 * What of Onset's own the series measures, from its name and a sample of its
 * spans' attributes: 'agent-probe' when its spans are the agent's synthetic
 * probes, 'onset-database' when its name or a span's path lies under one of
 * `ownDirs` (Onset's own database's directories), else null.
 */
export function onsetOwnOf(
  series: { name: string },
  spanAttrs: ReadonlyArray<Record<string, unknown> | null>,
  ownDirs: readonly string[],
): OnsetOwn | null {
  if (spanAttrs.some((a) => a?.['onset.source'] === 'probe')) return 'agent-probe';
  const paths = [series.name];
  for (const a of spanAttrs)
    for (const k of PATH_ATTRS) if (typeof a?.[k] === 'string') paths.push(a[k] as string);
  if (paths.some((p) => ownDirs.some((d) => under(p, d)))) return 'onset-database';
  return null;
}
