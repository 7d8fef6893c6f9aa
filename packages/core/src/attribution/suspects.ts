/**
 * Which deploy most likely caused a step (product.md: "says which deploy most
 * likely caused each one"). Pure: markers in, ranked suspects out.
 *
 * Markers of one rollout (the same kind, service, component and from -> to
 * versions, posted per host or inferred from telemetry) are one suspect with
 * its host list: the hosts that matter to this regression first, and how many
 * of the regressed hosts the rollout covers.
 *
 * A rollout is a suspect when its scope touches the regressed series:
 *   - the series' own service (scope 1),
 *   - for an edge (client / gap / server views), the callee `peer` — its
 *     code, config and dependency bumps (scope 1),
 *   - hosts feeding the series, for host-level changes without a service
 *     such as kernel rollouts (0.9),
 *   - another service's deploy on those hosts only with evidence: the
 *     regressed hosts are exactly the ones it touched (0.3, then the cohort's
 *     promotion). Sharing a host is not evidence.
 * Its time fit is 1 inside the onset's uncertainty (plus a minute or two of
 * clock slack), decays with a 20-minute scale for markers before that and a
 * 3-minute scale for markers after it (a change cannot precede its cause);
 * a rollout takes the best fit of the times it reached the regressed hosts.
 * Score = time × scope × specificity, then the cohort split adjusts it:
 * a marker that explains the slow cohort (same attribute and version, or
 * only slow hosts) gets √score; one that touched only fast hosts ×0.2;
 * a service-wide marker when only a cohort slowed down ×0.6.
 */
import type { Cohort } from './cohort.ts';

/** What a deploy marker says changed (the stored marker's fields, api.md "Deploys"). */
export interface MarkerChange {
  service: string | null;
  hosts: string[];
  component: string | null;
  from_version: string | null;
  to_version: string | null;
  commit: string | null;
  url: string | null;
  description: string | null;
}

/** One (service, host) of an inferred marker: when that service first reported the new value there. */
export interface MarkerHostChange {
  service: string;
  host: string;
  atMs: number;
}

export interface Marker extends MarkerChange {
  id: string;
  kind: string;
  atMs: number;
  source: string;
  /** Inferred markers: the per-(service, host) changes folded into them (their hosts' own times). */
  changes?: readonly MarkerHostChange[];
}

export interface AttributionInput {
  onsetMs: number;
  uncertaintyMs: number;
  service: string;
  view: string;
  /** Callee service of an edge series, else null. */
  peer: string | null;
  /** Hosts that feed the series (for an edge: the callee's). */
  hosts: readonly string[];
  /** Hosts with data after the onset (the regressed ones when no cohort narrows them); default `hosts`. */
  afterHosts?: readonly string[];
  cohort: Cohort | null;
}

/** How many of the regressed hosts a rollout touched. */
export type Coverage = { covered: number; regressed: number };

// A type alias, not an interface: the alert module takes suspects as plain records.
export type Suspect = {
  deploy_id: string;
  /** Every marker of this rollout, deploy_id first. */
  deploy_ids: string[];
  kind: string;
  service: string | null;
  component: string | null;
  from_version: string | null;
  to_version: string | null;
  /** The rollout's hosts: regressed hosts it covers first, then this series' other hosts, then the rest. */
  hosts: string[];
  /** Regressed hosts the rollout touched (the first `covered` of `hosts`); null for a marker without hosts. */
  coverage: Coverage | null;
  /** How many of `hosts` (the first ones) feed this series; the rest are other services' hosts. */
  series_hosts: number;
  at: string;
  source: string;
  commit: string | null;
  url: string | null;
  description: string | null;
  score: number;
  reason: string;
};

const MIN = 60_000;
/** Markers this long before the onset are not considered at all. */
export const LOOKBACK_MS = 6 * 3_600_000;
const BEFORE_SCALE_MS = 20 * MIN;
const AFTER_SCALE_MS = 3 * MIN;
const MIN_SCORE = 0.02;
/** Suspects kept per regression (and per incident: incident-suspects.ts). */
export const MAX_SUSPECTS = 5;

/** The window of marker times worth loading for an onset. */
export function markerWindow(
  onsetMs: number,
  uncertaintyMs: number,
): { fromMs: number; toMs: number } {
  return {
    fromMs: onsetMs - LOOKBACK_MS,
    toMs: onsetMs + slackOf(uncertaintyMs) + 10 * AFTER_SCALE_MS,
  };
}

function slackOf(uncertaintyMs: number): number {
  return Math.max(2 * MIN, uncertaintyMs) + MIN;
}

export function timeFit(onsetMs: number, uncertaintyMs: number, atMs: number): number {
  const slack = slackOf(uncertaintyMs);
  const d = onsetMs - atMs;
  if (d >= -slack && d <= slack) return 1;
  if (d > slack) return Math.exp(-(d - slack) / BEFORE_SCALE_MS);
  return Math.exp(-(-d - slack) / AFTER_SCALE_MS);
}

/** The markers of one rollout, as seen from one regressed series. */
interface Rollout {
  /** The marker the suspect is named after: a posted one if any (it carries commit, URL, description). */
  primary: Marker;
  members: Marker[];
  /** When the rollout reached each host (per-host detail of inferred markers, else the marker's time). */
  hostAt: Map<string, number>;
  /** Times of members that name no hosts (service-wide). */
  hostlessAt: number[];
  hosts: string[];
  inferred: boolean;
  alsoInferred: boolean;
}

const versionsCompatible = (x: string | null, y: string | null) =>
  x === null || y === null || x === y;

/**
 * Two markers describe the same rollout: the same kind, service and
 * component and the same change (from -> to, or the same commit), within the
 * lookback window attribution loads. Markers without a version or a commit
 * say too little to be merged.
 */
function sameRollout(x: Marker, y: Marker): boolean {
  if (x.kind !== y.kind || (x.service ?? null) !== (y.service ?? null)) return false;
  if (!versionsCompatible(x.component, y.component)) return false;
  if (x.to_version !== null || y.to_version !== null)
    return x.to_version === y.to_version && versionsCompatible(x.from_version, y.from_version);
  return x.commit !== null && x.commit === y.commit;
}

function rollouts(markers: readonly Marker[]): Rollout[] {
  const groups: Marker[][] = [];
  for (const m of [...markers].sort((x, y) => x.atMs - y.atMs || x.id.localeCompare(y.id))) {
    const g = groups.find((g) => g.some((x) => sameRollout(x, m)));
    if (g) g.push(m);
    else groups.push([m]);
  }
  return groups.map((members) => {
    const hostAt = new Map<string, number>();
    const hostlessAt: number[] = [];
    const at = (h: string, t: number) => hostAt.set(h, Math.min(t, hostAt.get(h) ?? t));
    const posted = members.filter((m) => m.source !== 'inferred');
    // A host's time: what a posted marker says, else what telemetry saw first.
    const add = (m: Marker, skip: ReadonlySet<string>) => {
      if (!m.hosts.length) hostlessAt.push(m.atMs);
      const detail = new Map<string, number>();
      for (const c of m.changes ?? [])
        detail.set(c.host, Math.min(c.atMs, detail.get(c.host) ?? c.atMs));
      for (const h of m.hosts) if (!skip.has(h)) at(h, detail.get(h) ?? m.atMs);
    };
    for (const m of posted) add(m, new Set());
    const postedHosts = new Set(hostAt.keys());
    for (const m of members) if (m.source === 'inferred') add(m, postedHosts);
    return {
      primary: posted[0] ?? members[0]!,
      members,
      hostAt,
      hostlessAt,
      hosts: [...hostAt.keys()],
      inferred: posted.length === 0,
      alsoInferred: posted.length > 0 && posted.length < members.length,
    };
  });
}

/** The rollout's hosts in the order that matters to this regression, and its coverage of the regressed hosts. */
function orderHosts(
  r: Rollout,
  regressed: readonly string[],
  seriesHosts: ReadonlySet<string>,
): { hosts: string[]; coverage: Coverage | null; inSeries: number } {
  const reg = new Set(regressed);
  const rank = (h: string) => (reg.has(h) ? 0 : seriesHosts.has(h) ? 1 : 2);
  const hosts = [...r.hosts].sort((x, y) => rank(x) - rank(y) || x.localeCompare(y));
  const inSeries = hosts.filter((h) => rank(h) < 2).length;
  if (!hosts.length || !reg.size) return { hosts, coverage: null, inSeries };
  return {
    hosts,
    inSeries,
    coverage: { covered: hosts.filter((h) => reg.has(h)).length, regressed: reg.size },
  };
}

/**
 * The time that best fits the onset among those the rollout reached the
 * regressed hosts or this series' hosts (else any of its markers): a canary
 * an hour before the rest is one rollout whose second wave is on time.
 */
function bestTime(r: Rollout, a: AttributionInput, regressed: readonly string[]): number {
  const pick = (hosts: readonly string[]) =>
    hosts.flatMap((h) => (r.hostAt.has(h) ? [r.hostAt.get(h)!] : []));
  // The series' other hosts count too: when the cohort misjudges a canary host as fast,
  // the wave that reached it at the onset must not be lost.
  let times = [...pick(regressed), ...pick(a.hosts), ...r.hostlessAt];
  if (!times.length) times = r.members.map((m) => m.atMs);
  let best = times[0]!;
  for (const t of times) {
    const d = timeFit(a.onsetMs, a.uncertaintyMs, t) - timeFit(a.onsetMs, a.uncertaintyMs, best);
    if (d > 0 || (d === 0 && Math.abs(t - a.onsetMs) < Math.abs(best - a.onsetMs))) best = t;
  }
  return best;
}

interface Scope {
  score: number;
  /** Where the marker applies, e.g. "on urlite (api-1, api-2), the callee of this edge". */
  text: string;
}

function scopeOf(
  r: Rollout,
  hosts: readonly string[],
  a: AttributionInput,
  regressed: readonly string[],
): Scope | null {
  const m = r.primary;
  const hostSet = new Set(a.hosts);
  const overlap = hosts.filter((h) => hostSet.has(h));
  if (m.service !== null && m.service === a.service) {
    // A deploy of this service to hosts that do not feed this series is a weaker fit.
    const elsewhere = hosts.length > 0 && a.hosts.length > 0 && overlap.length === 0;
    return {
      score: elsewhere ? 0.4 : 1,
      text: `on ${m.service}${hostsText(elsewhere ? hosts : overlap)}${a.peer ? ', the caller' : ''}`,
    };
  }
  // The callee's hosts need not feed the caller's own client series: no host check.
  if (m.service !== null && a.peer && m.service === a.peer)
    return { score: 1, text: `on ${m.service}${hostsText(hosts)}, the callee of this edge` };
  if (!overlap.length) return null;
  if (m.service === null)
    return { score: 0.9, text: `on ${listText(overlap)}, which feed this series` };
  // Another service's deploy: sharing a host is no evidence. It is one only when the
  // regressed hosts are exactly the ones it touched, and others of this series stayed fast.
  const c = a.cohort;
  if (!c || !c.fast_hosts.length) return null;
  const split = new Set([...c.slow_hosts, ...c.fast_hosts]);
  const touched = new Set(hosts.filter((h) => split.has(h)));
  const exact = touched.size === regressed.length && regressed.every((h) => touched.has(h));
  if (!exact) return null;
  return {
    score: 0.3,
    text: `on ${m.service}, which shares ${listText(overlap)} with this series: the regressed hosts are exactly the ones it touched`,
  };
}

/**
 * Whether a marker can explain a change in a series at all (its scope touches
 * it): the series' service, an edge's callee, or a host feeding the series.
 * The deploys list filtered by series_id and attribution keep the same markers.
 */
export function markerTouchesSeries(
  m: Pick<MarkerChange, 'service' | 'hosts'>,
  a: Pick<AttributionInput, 'service' | 'peer' | 'hosts'>,
): boolean {
  if (m.service !== null && (m.service === a.service || (a.peer && m.service === a.peer)))
    return true;
  const hostSet = new Set(a.hosts);
  return m.hosts.some((h) => hostSet.has(h));
}

const hostsText = (hosts: readonly string[]) => (hosts.length ? ` (${listText(hosts)})` : '');

function listText(items: readonly string[], max = 4): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/** A marker naming the component that changed says more than "a release". */
function specificity(m: Marker): number {
  let s = 1;
  if (m.kind === 'code') s = 0.97;
  else if (m.kind === 'infra') s = 0.95;
  if (m.source === 'inferred') s *= 0.98;
  return s;
}

/**
 * The marker a suspect is named after, for this regression: one that reached
 * a regressed host (a posted marker of another wave or of another service's
 * rollout to the same version is not this regression's), a posted one before
 * an inferred one (it carries commit, URL, description), then the one nearest
 * the time that fits.
 */
function nameMarker(r: Rollout, regressed: readonly string[], atMs: number): Marker {
  const reg = new Set(regressed);
  const reaches = (x: Marker) => x.hosts.some((h) => reg.has(h));
  const rank = (x: Marker) =>
    (reaches(x) || !x.hosts.length ? 0 : 2) + (x.source === 'inferred' ? 1 : 0);
  return r.members.reduce((b, x) =>
    rank(x) < rank(b) || (rank(x) === rank(b) && Math.abs(x.atMs - atMs) < Math.abs(b.atMs - atMs))
      ? x
      : b,
  );
}

type CohortFit = 'explains' | 'contradicts' | 'service-wide' | 'none';

function cohortFit(m: Marker, hosts: readonly string[], c: Cohort | null): CohortFit {
  if (!c) return 'none';
  const slowHosts = new Set(c.slow_hosts);
  const fastHosts = new Set(c.fast_hosts);
  const slowValues = new Set(c.slow);
  const fastValues = new Set(c.fast);
  const touched = hosts.filter((h) => slowHosts.has(h) || fastHosts.has(h));
  const versionIn = (set: Set<string>) => m.to_version !== null && set.has(m.to_version);
  let sameAttribute = false;
  const a = c.attribute;
  if (a === 'os.version') sameAttribute = m.kind === 'kernel';
  else if (a === 'service.version') sameAttribute = m.kind === 'code';
  else if (a.startsWith('dependency.'))
    sameAttribute = m.kind === 'dependency' && m.component === a.slice('dependency.'.length);
  else if (a.startsWith('onset.cohort.'))
    sameAttribute = m.component === a.slice('onset.cohort.'.length);
  if (sameAttribute) {
    if (versionIn(slowValues)) return 'explains';
    if (versionIn(fastValues)) return 'contradicts';
  }
  if (touched.length) {
    if (touched.every((h) => slowHosts.has(h))) return 'explains';
    if (touched.every((h) => fastHosts.has(h))) return 'contradicts';
    return 'none';
  }
  if (sameAttribute && m.to_version === null) return 'explains';
  return hosts.length ? 'none' : 'service-wide';
}

function whatText(m: Marker): string {
  const versions =
    m.from_version || m.to_version ? ` ${m.from_version ?? '?'} → ${m.to_version ?? '?'}` : '';
  switch (m.kind) {
    case 'dependency':
      return `Dependency bump ${m.component ?? ''}${versions}`.replace('  ', ' ');
    case 'kernel':
      return `Kernel change${versions}`;
    case 'code':
      return m.to_version || m.from_version
        ? `Release${versions}`
        : `Code deploy${m.commit ? ` ${m.commit.slice(0, 12)}` : ''}`;
    case 'config':
      return `Config change${m.component ? ` (${m.component}${versions})` : versions}`;
    default:
      return `Infrastructure change${m.component ? ` (${m.component})` : ''}${versions}`;
  }
}

function whenText(onsetMs: number, atMs: number): string {
  const d = onsetMs - atMs;
  const abs = Math.abs(d);
  if (abs < MIN) return 'at the onset';
  const span =
    abs >= 90 * MIN ? `${(abs / 3_600_000).toFixed(1)} h` : `${Math.round(abs / MIN)} min`;
  return d > 0 ? `${span} before the onset` : `${span} after the onset`;
}

function cohortText(fit: CohortFit, c: Cohort | null): string {
  if (!c) return '';
  const slow = `${c.attribute} = ${listText(c.slow, 3)}`;
  switch (fit) {
    case 'explains':
      return `; only hosts with ${slow} slowed down, which is what it changed`;
    case 'contradicts':
      return `; but only ${slow} slowed down, and it changed others`;
    case 'service-wide':
      return `; but only ${slow} slowed down, not the whole service`;
    default:
      return '';
  }
}

/** ", one rollout of 3 markers to 12 hosts covering 7 of 8 regressed hosts". */
function rolloutText(r: Rollout, coverage: Coverage | null): string {
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const rollout =
    r.members.length > 1 || r.hosts.length > 4
      ? `one rollout${r.members.length > 1 ? ` of ${r.members.length} markers` : ''}${r.hosts.length ? ` to ${plural(r.hosts.length, 'host')}` : ''}`
      : '';
  const covers = coverage
    ? `covering ${coverage.covered} of ${plural(coverage.regressed, 'regressed host')}`
    : '';
  return rollout || covers ? `, ${[rollout, covers].filter(Boolean).join(' ')}` : '';
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export function rankSuspects(markers: readonly Marker[], a: AttributionInput): Suspect[] {
  const regressed = [...(a.cohort ? a.cohort.slow_hosts : (a.afterHosts ?? a.hosts))].sort();
  const seriesHosts = new Set(a.hosts);
  const out: Array<{ suspect: Suspect; raw: number }> = [];
  for (const r of rollouts(markers)) {
    const { hosts, coverage, inSeries } = orderHosts(r, regressed, seriesHosts);
    const scope = scopeOf(r, hosts, a, regressed);
    if (!scope) continue;
    const atMs = bestTime(r, a, regressed);
    // Named after the posted marker nearest the time that fits (a canary's later wave).
    const m = nameMarker(r, regressed, atMs);
    const time = timeFit(a.onsetMs, a.uncertaintyMs, atMs);
    let score = time * scope.score * specificity(m);
    const fit = cohortFit(m, hosts, a.cohort);
    if (fit === 'explains') score = Math.sqrt(score);
    else if (fit === 'contradicts') score *= 0.2;
    else if (fit === 'service-wide') score *= 0.6;
    if (score < MIN_SCORE) continue;
    const source =
      m.source === 'inferred'
        ? ' (inferred from telemetry)'
        : r.alsoInferred
          ? ' (also seen in telemetry)'
          : '';
    const when = whenText(a.onsetMs, atMs);
    const ids = [m.id, ...r.members.filter((x) => x !== m).map((x) => x.id)];
    // A posted marker may leave out what an inferred one of the same rollout saw.
    const named: Marker = {
      ...m,
      component: m.component ?? r.members.find((x) => x.component !== null)?.component ?? null,
      from_version:
        m.from_version ?? r.members.find((x) => x.from_version !== null)?.from_version ?? null,
    };
    const suspect: Suspect = {
      deploy_id: m.id,
      deploy_ids: ids,
      kind: m.kind,
      service: m.service,
      component: named.component,
      from_version: named.from_version,
      to_version: m.to_version,
      hosts,
      coverage,
      series_hosts: inSeries,
      at: new Date(atMs).toISOString(),
      source: m.source,
      commit: m.commit,
      url: m.url,
      description: m.description,
      score: round2(Math.min(1, score)),
      reason: `${whatText(named)} ${scope.text}${rolloutText(r, coverage)}, ${when}${source}${cohortText(fit, a.cohort)}.`,
    };
    out.push({ suspect, raw: score });
  }
  // Best first; equal scores: the marker closer to the onset.
  out.sort(
    (x, y) =>
      y.raw - x.raw ||
      Math.abs(Date.parse(x.suspect.at) - a.onsetMs) -
        Math.abs(Date.parse(y.suspect.at) - a.onsetMs),
  );
  return out.slice(0, MAX_SUSPECTS).map((x) => x.suspect);
}
