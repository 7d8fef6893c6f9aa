/**
 * The one-look bisect (product.md incident 5): split a regressed series by
 * the attributes of the resources (hosts) that feed it and say when the step
 * is confined to some values of one attribute — slow: kernel 4.15 hosts,
 * fast: 4.4 hosts.
 *
 * Each group's level after the onset is compared with its own level before
 * (or the series' level before, for a value that only appeared at the onset,
 * such as a new kernel). A group is slow when it carries at least half of
 * the series' step (in log terms) and fast when it carries at most a fifth;
 * anything in between makes the attribute inconclusive. A cohort needs at
 * least one slow and one fast group with data after the onset at the same
 * time: a change everywhere is not confined to anything. Host names are a
 * last resort, used only when no attribute explains the split.
 */
import { Histogram } from '../histogram.ts';

export interface CohortRow {
  host: string;
  attrs: Record<string, string>;
  /** Minute at or after the onset window start (true) or in the before window (false). */
  after: boolean;
  idx: number[];
  cnt: number[];
}

// A type alias, not an interface: the alert module takes the cohort as a plain record.
export type Cohort = {
  attribute: string;
  slow: string[];
  fast: string[];
  /** Hosts in each group (extra to api.md; attribution matches marker hosts against them). */
  slow_hosts: string[];
  fast_hosts: string[];
};

export interface CohortOptions {
  metric: 'p50' | 'p99';
  /** Same floor as the detector used (µs); ~1 ms for gap views. */
  floorUs: number;
  /** Fewest events a group needs in a window to count. */
  minEvents?: number;
}

const HOST_KEY = 'host.name';
const SLOW_SHARE = 0.5;
const FAST_SHARE = 0.2;

interface Group {
  before: Histogram;
  after: Histogram;
  hosts: Set<string>;
}

function level(h: Histogram, q: number, floor: number): number {
  return Math.log(Math.max(0, h.quantile(q)) + floor);
}

export function findCohort(rows: readonly CohortRow[], opts: CohortOptions): Cohort | null {
  const q = opts.metric === 'p50' ? 0.5 : 0.99;
  const floor = opts.floorUs;
  const minEvents = opts.minEvents ?? 5;
  const allBefore = new Histogram();
  const allAfter = new Histogram();
  const byKey = new Map<string, Map<string, Group>>();
  const keysOnEveryRow = new Set<string>(rows.length ? Object.keys(rows[0]!.attrs) : []);
  for (const r of rows) {
    (r.after ? allAfter : allBefore).addSparse(r);
    for (const k of keysOnEveryRow) if (!(k in r.attrs)) keysOnEveryRow.delete(k);
  }
  if (allBefore.count < minEvents || allAfter.count < minEvents) return null;
  const lb = level(allBefore, q, floor);
  const step = level(allAfter, q, floor) - lb;
  if (!(step > Math.log(1.1))) return null;

  const keys = [...keysOnEveryRow, HOST_KEY];
  for (const r of rows) {
    for (const k of keys) {
      const v = k === HOST_KEY ? r.host : r.attrs[k]!;
      if (k === HOST_KEY && v === '') continue;
      let groups = byKey.get(k);
      if (!groups) byKey.set(k, (groups = new Map()));
      let g = groups.get(v);
      if (!g)
        groups.set(v, (g = { before: new Histogram(), after: new Histogram(), hosts: new Set() }));
      (r.after ? g.after : g.before).addSparse(r);
      if (r.after && r.host) g.hosts.add(r.host);
    }
  }

  let best: {
    cohort: Cohort;
    separation: number;
    novel: boolean;
    isHost: boolean;
    values: number;
  } | null = null;
  for (const [key, groups] of byKey) {
    const slow: Array<[string, Group, number]> = [];
    const fast: Array<[string, Group, number]> = [];
    let inconclusive = false;
    for (const [value, g] of groups) {
      if (g.after.count < minEvents) continue;
      const base = g.before.count >= minEvents ? level(g.before, q, floor) : lb;
      const share = (level(g.after, q, floor) - base) / step;
      if (share >= SLOW_SHARE) slow.push([value, g, share]);
      else if (share <= FAST_SHARE) fast.push([value, g, share]);
      else inconclusive = true;
    }
    if (inconclusive || !slow.length || !fast.length) continue;
    const separation = Math.min(...slow.map((s) => s[2])) - Math.max(...fast.map((f) => f[2]));
    // A slow value nobody ran before the onset is what changed (a new kernel, a new version).
    const novel = slow.every(([, g]) => g.before.count < minEvents);
    const cand = {
      cohort: {
        attribute: key,
        slow: slow.map((s) => s[0]).sort(),
        fast: fast.map((f) => f[0]).sort(),
        slow_hosts: [...new Set(slow.flatMap(([, g]) => [...g.hosts]))].sort(),
        fast_hosts: [...new Set(fast.flatMap(([, g]) => [...g.hosts]))].sort(),
      },
      separation,
      novel,
      isHost: key === HOST_KEY,
      values: slow.length + fast.length,
    };
    if (!best || better(cand, best)) best = cand;
  }
  return best?.cohort ?? null;
}

/**
 * A real attribute over host names (the host list is the fallback when no
 * attribute explains the split); then a slow value that is new at the onset;
 * then the cleaner separation; then fewer values.
 */
function better(
  a: { separation: number; novel: boolean; isHost: boolean; values: number; cohort: Cohort },
  b: { separation: number; novel: boolean; isHost: boolean; values: number; cohort: Cohort },
): boolean {
  if (a.isHost !== b.isHost) return !a.isHost;
  if (a.novel !== b.novel) return a.novel;
  if (Math.abs(a.separation - b.separation) > 0.1) return a.separation > b.separation;
  if (a.values !== b.values) return a.values < b.values;
  return a.cohort.attribute < b.cohort.attribute;
}
