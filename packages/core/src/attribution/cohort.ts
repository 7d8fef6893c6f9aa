/**
 * The one-look bisect (product.md incident 5): split a regressed series by
 * the attributes of the resources (hosts) that feed it and say when the step
 * is confined to some values of one attribute — slow: kernel 4.15 hosts,
 * fast: 4.4 hosts.
 *
 * For each attribute, the minutes after the onset are grouped by value; a
 * value's level after is compared with the level before of the hosts that
 * carry it (their own past, whatever they ran then). A value is slow when it
 * carries at least half of the series' step (in log terms), fast when it
 * carries at most a fifth. An attribute is a candidate when it has slow and
 * fast values at once (a change everywhere is not confined to anything), and
 * it is judged by how well it explains slow vs fast *hosts*: each (host,
 * value) part of the after window must be on its value's side, and at least
 * MIN_EXPLAINED of the events must be. Among candidates, real attributes beat
 * host names (a list of hosts always splits, by chance too), and an attribute
 * that changed at the onset (a host ran another value before it, or a slow
 * value nobody ran before) beats one that did not.
 *
 * A host that carries a slow value after the onset is a slow host — a host
 * that moved is never on the fast side, even if it moved late — unless its
 * own events with that value clearly show no step (another service's rollout
 * moved it): then it is on neither side. No host is on both sides. Each side reports its levels before and after.
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

/** Latency of one side over a window, like the contract's Level (ms). */
export type CohortLevel = { p50_ms: number; p99_ms: number; count: number };

export type CohortSide = { before: CohortLevel; after: CohortLevel };

// A type alias, not an interface: the alert module takes the cohort as a plain record.
export type Cohort = {
  attribute: string;
  slow: string[];
  fast: string[];
  /** Hosts in each group (extra to api.md; attribution matches marker hosts against them). */
  slow_hosts: string[];
  fast_hosts: string[];
  /** Before/after levels of each side: the slow hosts' are the regression's headline. */
  levels?: { slow: CohortSide; fast: CohortSide };
  /** Share of the after events on their value's side (0..1). */
  explained?: number;
  /** The attribute changed at the onset (a host moved, or a slow value is new). */
  changed?: boolean;
};

export interface CohortOptions {
  metric: 'p50' | 'p99';
  /** Same floor as the detector used (µs); ~1 ms for gap views. */
  floorUs: number;
  /** Fewest events a group needs in a window to count. */
  minEvents?: number;
}

const HOST_KEY = 'host.name';
const UNSET = '(unset)';
const SLOW_SHARE = 0.5;
const FAST_SHARE = 0.2;
/** A part of the after window is "slow" above this share of the step. */
const MID_SHARE = (SLOW_SHARE + FAST_SHARE) / 2;
/** A host carrying a slow value is called unaffected only with this many times minEvents of its own. */
const UNAFFECTED_MIN_EVENTS = 4;
/** Fewest after events an attribute must put on the right side. */
const MIN_EXPLAINED = 0.8;

function level(h: Histogram, q: number, floor: number): number {
  return Math.log(Math.max(0, h.quantile(q)) + floor);
}

const sig4 = (x: number) => Number(x.toPrecision(4));

function levelOf(h: Histogram): CohortLevel {
  if (!h.count) return { p50_ms: 0, p99_ms: 0, count: 0 };
  return {
    p50_ms: sig4(h.quantile(0.5) / 1000),
    p99_ms: sig4(h.quantile(0.99) / 1000),
    count: h.count,
  };
}

function merged(hs: Iterable<Histogram | undefined>): Histogram {
  const out = new Histogram();
  for (const h of hs) if (h) out.merge(h);
  return out;
}

interface Value {
  after: Histogram;
  /** After events per host carrying this value. */
  byHost: Map<string, Histogram>;
  /** Hosts that reported this value before the onset. */
  beforeHosts: Set<string>;
}

interface Candidate {
  cohort: Cohort;
  explained: number;
  separation: number;
  changed: boolean;
  novel: boolean;
  isHost: boolean;
  values: number;
}

export function findCohort(rows: readonly CohortRow[], opts: CohortOptions): Cohort | null {
  const q = opts.metric === 'p50' ? 0.5 : 0.99;
  const floor = opts.floorUs;
  const minEvents = opts.minEvents ?? 5;
  const allBefore = new Histogram();
  const allAfter = new Histogram();
  const hostBefore = new Map<string, Histogram>();
  const keys = new Set<string>();
  for (const r of rows) {
    (r.after ? allAfter : allBefore).addSparse(r);
    if (!r.after && r.host) {
      let h = hostBefore.get(r.host);
      if (!h) hostBefore.set(r.host, (h = new Histogram()));
      h.addSparse(r);
    }
    for (const k of Object.keys(r.attrs)) keys.add(k);
  }
  if (allBefore.count < minEvents || allAfter.count < minEvents) return null;
  const lb = level(allBefore, q, floor);
  const step = level(allAfter, q, floor) - lb;
  if (!(step > Math.log(1.1))) return null;

  // A host's own level before, else (a host new at the onset) the series'.
  const baseOf = (hosts: Iterable<string>) => {
    const h = merged([...hosts].map((x) => hostBefore.get(x)));
    return h.count >= minEvents ? level(h, q, floor) : lb;
  };
  const shareOf = (after: Histogram, base: number) => (level(after, q, floor) - base) / step;

  // Hosts that reported a new value of some attribute after the onset: by host name alone
  // (the last resort) they are never called fast — their change may simply come later.
  const moved = movedHosts(rows);
  let best: Candidate | null = null;
  for (const key of [...keys, HOST_KEY]) {
    const isHost = key === HOST_KEY;
    const values = new Map<string, Value>();
    for (const r of rows) {
      if (!r.host && isHost) continue;
      const v = isHost ? r.host : (r.attrs[key] ?? UNSET);
      let g = values.get(v);
      if (!g)
        values.set(v, (g = { after: new Histogram(), byHost: new Map(), beforeHosts: new Set() }));
      if (!r.after) {
        if (r.host) g.beforeHosts.add(r.host);
        continue;
      }
      g.after.addSparse(r);
      if (!r.host) continue;
      let h = g.byHost.get(r.host);
      if (!h) g.byHost.set(r.host, (h = new Histogram()));
      h.addSparse(r);
    }
    const cand = judge(key, isHost, values);
    if (cand && (!best || better(cand, best))) best = cand;
  }
  return best?.cohort ?? null;

  function judge(key: string, isHost: boolean, values: Map<string, Value>): Candidate | null {
    const slow: Array<[string, Value, number]> = [];
    const fast: Array<[string, Value, number]> = [];
    const side = new Map<string, 'slow' | 'fast' | 'mid'>();
    for (const [value, g] of values) {
      if (g.after.count < minEvents) continue;
      const share = shareOf(g.after, baseOf(g.byHost.keys()));
      const s = share >= SLOW_SHARE ? 'slow' : share <= FAST_SHARE ? 'fast' : 'mid';
      side.set(value, s);
      if (s !== 'mid') (s === 'slow' ? slow : fast).push([value, g, share]);
    }
    if (!slow.length || !fast.length) return null;

    // How well the values explain the hosts: each (host, value) part on its value's side.
    let right = 0;
    let total = 0;
    for (const [value, g] of values) {
      const s = side.get(value);
      if (!s) continue;
      for (const [host, h] of g.byHost) {
        if (h.count < minEvents) continue;
        total += h.count;
        const share = shareOf(h, baseOf([host]));
        if ((s === 'slow' && share >= MID_SHARE) || (s === 'fast' && share < MID_SHARE))
          right += h.count;
      }
    }
    const explained = total ? right / total : 0;
    if (explained < MIN_EXPLAINED) return null;

    // A host that carries a slow value is slow (it moved, perhaps late), unless its own events
    // with it clearly did not slow down (another service's rollout moved it; the step is not
    // there): then it is on neither side, never fast.
    const slowParts = new Map<string, Histogram[]>();
    for (const [, g] of slow)
      for (const [host, h] of g.byHost) slowParts.set(host, [...(slowParts.get(host) ?? []), h]);
    const clearlyFast = (host: string, h: Histogram) =>
      h.count >= UNAFFECTED_MIN_EVENTS * minEvents && shareOf(h, baseOf([host])) <= FAST_SHARE;
    const unaffected = new Set(
      [...slowParts].filter(([host, hs]) => hs.every((h) => clearlyFast(host, h))).map(([h]) => h),
    );
    const slowHosts = new Set([...slowParts.keys()].filter((h) => !unaffected.has(h)));
    const fastHosts = new Set(
      fast
        .flatMap(([, g]) => [...g.byHost.keys()])
        .filter((h) => !slowParts.has(h) && !(isHost && moved.has(h))),
    );
    if (!slowHosts.size) return null;
    // A slow value nobody ran before the onset is what changed (a new kernel, a new version);
    // a host that ran another value before it than after it moved at the onset.
    const novel = slow.every(([, g]) => g.beforeHosts.size === 0);
    const changed = !isHost && (novel || someHostMoved(values));
    // Every host moved (some later than others): not confined to anything.
    if (!fastHosts.size) return null;
    const slowAfter = unaffected.size
      ? merged(
          slow.flatMap(([, g]) =>
            [...g.byHost].filter(([h]) => slowHosts.has(h)).map(([, x]) => x),
          ),
        )
      : merged(slow.map(([, g]) => g.after));
    const fastAfter = merged(
      fast.flatMap(([, g]) => [...g.byHost].filter(([h]) => fastHosts.has(h)).map(([, x]) => x)),
    );
    const separation = Math.min(...slow.map((s) => s[2])) - Math.max(...fast.map((f) => f[2]));
    return {
      cohort: {
        attribute: key,
        slow: slow.map((s) => s[0]).sort(),
        fast: fast.map((f) => f[0]).sort(),
        slow_hosts: [...slowHosts].sort(),
        fast_hosts: [...fastHosts].sort(),
        levels: {
          slow: {
            before: levelOf(merged([...slowHosts].map((h) => hostBefore.get(h)))),
            after: levelOf(slowAfter),
          },
          fast: {
            before: levelOf(merged([...fastHosts].map((h) => hostBefore.get(h)))),
            after: levelOf(fastAfter),
          },
        },
        explained: Math.round(explained * 1000) / 1000,
        changed,
      },
      explained,
      separation,
      changed,
      novel,
      isHost,
      values: slow.length + fast.length,
    };
  }
}

/** Hosts that reported, after the onset, a value of some attribute they did not report before it. */
function movedHosts(rows: readonly CohortRow[]): Set<string> {
  const before = new Map<string, Set<string>>();
  for (const r of rows) {
    if (r.after || !r.host) continue;
    let s = before.get(r.host);
    if (!s) before.set(r.host, (s = new Set()));
    for (const [k, v] of Object.entries(r.attrs)) s.add(`${k}=${v}`);
  }
  const out = new Set<string>();
  for (const r of rows) {
    if (!r.after || !r.host || out.has(r.host)) continue;
    const had = before.get(r.host);
    if (had && Object.entries(r.attrs).some(([k, v]) => !had.has(`${k}=${v}`))) out.add(r.host);
  }
  return out;
}

/** Some host reported a value after the onset that it did not report before it. */
function someHostMoved(values: ReadonlyMap<string, Value>): boolean {
  const before = new Map<string, Set<string>>();
  for (const [v, g] of values)
    for (const h of g.beforeHosts) {
      let s = before.get(h);
      if (!s) before.set(h, (s = new Set()));
      s.add(v);
    }
  for (const [v, g] of values)
    for (const h of g.byHost.keys()) {
      const had = before.get(h);
      if (had && !had.has(v)) return true;
    }
  return false;
}

/**
 * A real attribute over host names (a list of hosts always splits, by chance
 * too); then one that changed at the onset; then the one that explains more
 * of the hosts; then a slow value that is new; then the cleaner separation;
 * then fewer values.
 */
function better(a: Candidate, b: Candidate): boolean {
  if (a.isHost !== b.isHost) return !a.isHost;
  if (a.changed !== b.changed) return a.changed;
  if (Math.abs(a.explained - b.explained) > 0.05) return a.explained > b.explained;
  if (a.novel !== b.novel) return a.novel;
  if (Math.abs(a.separation - b.separation) > 0.1) return a.separation > b.separation;
  if (a.values !== b.values) return a.values < b.values;
  return a.cohort.attribute < b.cohort.attribute;
}
