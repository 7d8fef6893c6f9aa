/**
 * Which deploy most likely caused a step (product.md: "says which deploy most
 * likely caused each one"). Pure: markers in, ranked suspects out.
 *
 * A marker is a suspect when its scope touches the regressed series:
 *   - the series' own service (scope 1),
 *   - for an edge (client / gap / server views), the callee `peer` — its
 *     code, config and dependency bumps (scope 1),
 *   - hosts feeding the series, for host-level changes without a service
 *     such as kernel rollouts (0.9) or another service's deploy on those
 *     hosts (0.3).
 * Its time fit is 1 inside the onset's uncertainty (plus a minute or two of
 * clock slack), decays with a 20-minute scale for markers before that and a
 * 3-minute scale for markers after it (a change cannot precede its cause).
 * Score = time × scope × specificity, then the cohort split adjusts it:
 * a marker that explains the slow cohort (same attribute and version, or
 * exactly the slow hosts) gets √score; one that touched only fast hosts ×0.2;
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

export interface Marker extends MarkerChange {
  id: string;
  kind: string;
  atMs: number;
  source: string;
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
  cohort: Cohort | null;
}

// A type alias, not an interface: the alert module takes suspects as plain records.
export type Suspect = {
  deploy_id: string;
  kind: string;
  service: string | null;
  component: string | null;
  from_version: string | null;
  to_version: string | null;
  hosts: string[];
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
const MAX_SUSPECTS = 5;

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

interface Scope {
  score: number;
  /** Where the marker applies, e.g. "on urlite (api-1, api-2), the callee of this edge". */
  text: string;
}

function scopeOf(m: Marker, a: AttributionInput): Scope | null {
  const hostSet = new Set(a.hosts);
  const overlap = m.hosts.filter((h) => hostSet.has(h));
  if (m.service !== null && m.service === a.service) {
    // A deploy of this service to hosts that do not feed this series is a weaker fit.
    const elsewhere = m.hosts.length > 0 && a.hosts.length > 0 && overlap.length === 0;
    return {
      score: elsewhere ? 0.4 : 1,
      text: `on ${m.service}${hostsText(elsewhere ? m.hosts : overlap)}${a.peer ? ', the caller' : ''}`,
    };
  }
  // The callee's hosts need not feed the caller's own client series: no host check.
  if (m.service !== null && a.peer && m.service === a.peer)
    return { score: 1, text: `on ${m.service}${hostsText(m.hosts)}, the callee of this edge` };
  if (overlap.length) {
    if (m.service === null)
      return { score: 0.9, text: `on ${listText(overlap)}, which feed this series` };
    return {
      score: 0.3,
      text: `on ${m.service}, which shares ${listText(overlap)} with this series`,
    };
  }
  return null;
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

const hostsText = (hosts: string[]) => (hosts.length ? ` (${listText(hosts)})` : '');

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

type CohortFit = 'explains' | 'contradicts' | 'service-wide' | 'none';

function cohortFit(m: Marker, c: Cohort | null): CohortFit {
  if (!c) return 'none';
  const slowHosts = new Set(c.slow_hosts);
  const fastHosts = new Set(c.fast_hosts);
  const slowValues = new Set(c.slow);
  const fastValues = new Set(c.fast);
  const touched = m.hosts.filter((h) => slowHosts.has(h) || fastHosts.has(h));
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
  return m.hosts.length ? 'none' : 'service-wide';
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

/**
 * The same change reported twice (a CI hook and inference from telemetry):
 * keep the posted marker, which carries commit, URL and description.
 */
function dropDuplicates(markers: readonly Marker[]): { kept: Marker[]; alsoInferred: Set<string> } {
  const api = markers.filter((m) => m.source !== 'inferred');
  const alsoInferred = new Set<string>();
  const kept = markers.filter((m) => {
    if (m.source !== 'inferred') return true;
    const twin =
      api.find(
        (x) =>
          x.kind === m.kind &&
          (x.service ?? null) === (m.service ?? null) &&
          (x.component ?? null) === (m.component ?? null) &&
          x.to_version !== null &&
          x.to_version === m.to_version &&
          Math.abs(x.atMs - m.atMs) <= 30 * MIN,
      ) ??
      api.find(
        (x) =>
          x.kind === m.kind &&
          x.service === null &&
          m.service === null &&
          x.to_version === m.to_version &&
          m.hosts.every((h) => x.hosts.includes(h)) &&
          Math.abs(x.atMs - m.atMs) <= 30 * MIN,
      );
    if (twin) alsoInferred.add(twin.id);
    return !twin;
  });
  return { kept, alsoInferred };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export function rankSuspects(markers: readonly Marker[], a: AttributionInput): Suspect[] {
  const { kept, alsoInferred } = dropDuplicates(markers);
  const out: Array<{ suspect: Suspect; raw: number }> = [];
  for (const m of kept) {
    const scope = scopeOf(m, a);
    if (!scope) continue;
    const time = timeFit(a.onsetMs, a.uncertaintyMs, m.atMs);
    let score = time * scope.score * specificity(m);
    const fit = cohortFit(m, a.cohort);
    if (fit === 'explains') score = Math.sqrt(score);
    else if (fit === 'contradicts') score *= 0.2;
    else if (fit === 'service-wide') score *= 0.6;
    if (score < MIN_SCORE) continue;
    const source =
      m.source === 'inferred'
        ? ' (inferred from telemetry)'
        : alsoInferred.has(m.id)
          ? ' (also seen in telemetry)'
          : '';
    const when = whenText(a.onsetMs, m.atMs);
    const suspect: Suspect = {
      deploy_id: m.id,
      kind: m.kind,
      service: m.service,
      component: m.component,
      from_version: m.from_version,
      to_version: m.to_version,
      hosts: m.hosts,
      at: new Date(m.atMs).toISOString(),
      source: m.source,
      commit: m.commit,
      url: m.url,
      description: m.description,
      score: round2(Math.min(1, score)),
      reason: `${whatText(m)} ${scope.text}, ${when}${source}${cohortText(fit, a.cohort)}.`,
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
