/**
 * Incidents, not series (docs/regressions.md "One incident, one regression"):
 * the rule that says whether a step found on one series belongs to the same
 * incident as a step already found on another, and which of an incident's
 * members is its headline. Pure; the server applies it when a pass finds a step.
 */
import { LOOKBACK_MS, timeFit, type Suspect } from './attribution/suspects.ts';

/**
 * The rollout a step is attributed to: the markers of its top suspect (every
 * wave of one rollout) and when that rollout reached the series' hosts at the
 * time that fits the step.
 */
export interface RolloutRef {
  deployIds: readonly string[];
  atMs: number;
  /** The service its markers are of; null for host markers (a kernel, …); undefined: not known. */
  service?: string | null;
}

/** A step on one series, as grouping sees it. */
export interface IncidentMember {
  /** The series the step is on, when known (a later step on it may grow the incident). */
  seriesId?: string;
  service: string;
  op: string;
  view: string;
  name: string;
  /** The callee of an edge series (client, gap, server views); '' or null otherwise. */
  peer: string | null;
  onsetMs: number;
  uncertaintyMs: number;
  ratio_p50: number;
  ratio_p99: number;
  /** Its top suspect (for a member of a regression: the regression's), when known. */
  rollout?: RolloutRef | null;
  /**
   * Onset's own noise (the agent's synthetic probes, Onset's own database):
   * such a step never joins another incident, nor another joins it.
   */
  own?: OnsetOwn | null;
}

/** What of Onset's own a series measures: the agent's probes, or Onset's own (embedded) database. */
export type OnsetOwn = 'agent-probe' | 'onset-database';

/** Onsets this close (plus the larger onset uncertainty) are "around the same onset". */
export const INCIDENT_WINDOW_MS = 5 * 60_000;
/** However uncertain the onsets, steps further apart than this are separate incidents. */
export const INCIDENT_WINDOW_MAX_MS = 15 * 60_000;

/**
 * A further step on a series of an open incident, up to this long after that
 * series' step, is the incident growing (a rollout's later waves after its
 * canary), not a new one.
 */
export const INCIDENT_GROWTH_MS = 30 * 60_000;

/**
 * Later than INCIDENT_GROWTH_MS, a further step still grows the incident when
 * it is the same rollout's later wave, up to as long after as attribution
 * looks back for markers (a canary can bake for hours).
 */
export const INCIDENT_ROLLOUT_GROWTH_MS = LOOKBACK_MS;

/**
 * A later wave reached the series around the step's onset: the time fit of
 * attribution at least this (within the onset's slack, or up to ~14 minutes
 * before it: a detected onset can be a few minutes late; a canary an hour
 * before fits 0.06).
 */
const WAVE_TIME_FIT = 0.5;

/** How far apart two onsets may be and still be one incident. */
export function incidentWindowMs(a: IncidentMember, b: IncidentMember): number {
  return Math.min(
    INCIDENT_WINDOW_MAX_MS,
    INCIDENT_WINDOW_MS + Math.max(a.uncertaintyMs, b.uncertaintyMs),
  );
}

const peerOf = (m: IncidentMember) => m.peer || null;

/**
 * The edge a series is a view of, as "caller→callee op name", or null. Edge
 * series (client, gap, server views) are filed under the caller with the
 * callee as peer; the callee's own server series (no peer) is its side of
 * every edge that calls that operation, so it has no caller here.
 */
function edgeOf(m: IncidentMember): { caller: string | null; callee: string } | null {
  const peer = peerOf(m);
  if (peer) return { caller: m.service, callee: peer };
  if (m.view === 'server') return { caller: null, callee: m.service };
  return null;
}

/**
 * True when the two series are views of one edge: the same operation and
 * name, the same callee, and the same caller unless one of them is the
 * callee's own server series.
 */
export function sameEdge(a: IncidentMember, b: IncidentMember): boolean {
  if (a.op !== b.op || a.name !== b.name) return false;
  const ea = edgeOf(a);
  const eb = edgeOf(b);
  if (!ea || !eb || ea.callee !== eb.callee) return false;
  if (ea.caller === null && eb.caller === null) return false; // two own server series: one series
  return ea.caller === null || eb.caller === null || ea.caller === eb.caller;
}

/**
 * One incident: onsets within the window, and either views of one edge or
 * series of one service (several routes, several executables, a service and
 * its calls out). A gap view (the time between a caller's call and the
 * callee's handling: network, the caller's machine) is one incident only with
 * the views of its own edge: a step in another gap of the same caller (its
 * machine's load) is not the callee's incident. Onset's own noise (`own`)
 * never shares an incident with anything else.
 */
export function sameIncident(a: IncidentMember, b: IncidentMember): boolean {
  if ((a.own ?? null) !== (b.own ?? null)) return false;
  if (Math.abs(a.onsetMs - b.onsetMs) > incidentWindowMs(a, b)) return false;
  if (a.view === 'gap' || b.view === 'gap') return sameEdge(a, b);
  return a.service === b.service || sameEdge(a, b);
}

/**
 * Whether two rollouts are known and different: no marker in common (one
 * rollout's markers, every wave, are one suspect). Unknown (no suspect, or not
 * looked up) never differs.
 */
export function differentRollouts(
  a: RolloutRef | null | undefined,
  b: RolloutRef | null | undefined,
): boolean {
  if (!a || !b) return false;
  return !a.deployIds.some((id) => b.deployIds.includes(id));
}

/**
 * Whether a step is one incident with a member only because they are series
 * of one service (not views of one edge): such a link holds only while their
 * top suspects do not tell them apart (see stepJoins).
 */
export function serviceLinkOnly(a: IncidentMember, b: IncidentMember): boolean {
  return sameIncident(a, b) && !sameEdge(a, b);
}

/**
 * Whether `step` is one incident with `member`'s: sameIncident, except a link
 * by service alone when the step's own top suspect names another rollout than
 * the member's regression's, one the step's attribution weighed (a marker of
 * its service, of its callee, or of hosts), each reaching its series around
 * its onset. A service that calls a callee bumped minutes after the service's
 * own release sees the callee's step on its call out (the client view of that
 * edge, whose suspects include the callee's markers and name the bump): that
 * step is the callee's incident, not the release's. The service's route that
 * makes the call sees only its own service's markers: its suspect says nothing
 * about the callee's rollout, so it still joins the callee's incident.
 */
export function stepJoins(member: IncidentMember, step: IncidentMember): boolean {
  if (!sameIncident(member, step)) return false;
  if (sameEdge(member, step)) return true;
  const theirs = namedRollout(member);
  const mine = namedRollout(step);
  if (!(theirs && weighs(step, theirs) && differentRollouts(theirs, mine))) return true;
  // One rollout fits the other's onset better than that one's own: one incident (as apartByRollout).
  return fitsBetter(member, theirs, mine!) || fitsBetter(step, mine!, theirs);
}

/**
 * Whether two regressions a step links only by service stay apart: their
 * headlines' suspects name different rollouts (a release of the caller and a
 * bump of its callee a few minutes later are two incidents, even when a route
 * of the caller that calls the callee steps with both).
 */
export function apartByRollout(a: IncidentMember, b: IncidentMember): boolean {
  const ra = namedRollout(a);
  const rb = namedRollout(b);
  if (!differentRollouts(ra, rb)) return false;
  return !fitsBetter(a, ra!, rb!) && !fitsBetter(b, rb!, ra!);
}

/**
 * Whether `other` reached `m`'s series closer to its onset than `own`, its
 * own top suspect (time fit, strictly): a caller's release 8 minutes before
 * an onset and its callee's bump at it name one incident, the bump's (its
 * suspects are every member's: core's incidentSuspects); a release at the
 * onset and a bump minutes later are two.
 */
function fitsBetter(m: IncidentMember, own: RolloutRef, other: RolloutRef): boolean {
  return (
    timeFit(m.onsetMs, m.uncertaintyMs, other.atMs) > timeFit(m.onsetMs, m.uncertaintyMs, own.atMs)
  );
}

/** Whether a series' attribution weighs a rollout's markers: its service's, its callee's, or hosts'. */
function weighs(m: IncidentMember, r: RolloutRef): boolean {
  if (r.service === undefined || r.service === null) return true;
  return r.service === m.service || (!!m.peer && r.service === m.peer);
}

/**
 * The rollout a step's suspect names, when it reached the series around the
 * onset (the time fit of a later wave): a route of a caller sees only its own
 * service's markers, so its top suspect can be a release long before the step
 * (the only candidate), which tells nothing apart.
 */
function namedRollout(m: IncidentMember): RolloutRef | null {
  const r = m.rollout;
  return r && timeFit(m.onsetMs, m.uncertaintyMs, r.atMs) >= WAVE_TIME_FIT ? r : null;
}

/**
 * The order a batch's steps are grouped in, whatever their series ids: the
 * earliest onset first (a series' earlier step opens, its later one grows
 * the incident: growsIncident looks forward), then the clearest step (it
 * opens the regression, the others join it), then by labels. So the steps of
 * one pass make the same regressions whichever order their series were
 * created in; the headline is the clearest member whatever joined first.
 */
export function compareSteps(a: IncidentMember, b: IncidentMember): number {
  return (
    a.onsetMs - b.onsetMs ||
    stepStrength(b) - stepStrength(a) ||
    labelKey(a).localeCompare(labelKey(b))
  );
}

const labelKey = (m: IncidentMember) =>
  `${m.service}\u0000${m.op}\u0000${m.view}\u0000${m.name}\u0000${m.peer ?? ''}`;

/**
 * Whether two regressions that one step belongs to are one incident, to be
 * merged: their headlines' onsets within the incident window of each other
 * (a chain of steps minutes apart never merges two incidents an hour apart)
 * and both Onset's own or neither.
 */
export function mayMerge(a: IncidentMember, b: IncidentMember): boolean {
  if ((a.own ?? null) !== (b.own ?? null)) return false;
  return Math.abs(a.onsetMs - b.onsetMs) <= incidentWindowMs(a, b);
}

/**
 * True when `later` is a further step on the series of `member` (an open
 * incident's), after it and within INCIDENT_GROWTH_MS; or later, up to
 * INCIDENT_ROLLOUT_GROWTH_MS, when it is the same rollout's later wave: its
 * top suspect shares a marker with the incident's (one rollout's markers are
 * one suspect) and that rollout reached the series around its onset.
 */
export function growsIncident(member: IncidentMember, later: IncidentMember): boolean {
  if (!sameSeriesLater(member, later)) return false;
  if (later.onsetMs - member.onsetMs <= INCIDENT_GROWTH_MS) return true;
  const a = member.rollout;
  const b = later.rollout;
  if (!a || !b || !b.deployIds.some((id) => a.deployIds.includes(id))) return false;
  return timeFit(later.onsetMs, later.uncertaintyMs, b.atMs) >= WAVE_TIME_FIT;
}

/**
 * Whether growsIncident(member, later) may hold once `later`'s rollout is
 * known: worth attributing a step before deciding whether it opens a regression.
 */
export function mayGrowByRollout(member: IncidentMember, later: IncidentMember): boolean {
  return (
    sameSeriesLater(member, later) &&
    later.onsetMs - member.onsetMs > INCIDENT_GROWTH_MS &&
    !!member.rollout
  );
}

function sameSeriesLater(member: IncidentMember, later: IncidentMember): boolean {
  if (member.seriesId === undefined || member.seriesId !== later.seriesId) return false;
  const dt = later.onsetMs - member.onsetMs;
  return dt > 0 && dt <= INCIDENT_ROLLOUT_GROWTH_MS;
}

/** The rollout of a step's top suspect, or null without one. */
export function rolloutOf(
  top: Pick<Suspect, 'deploy_id' | 'deploy_ids' | 'at' | 'service'> | undefined,
): RolloutRef | null {
  if (!top) return null;
  return {
    deployIds: top.deploy_ids?.length ? top.deploy_ids : [top.deploy_id],
    atMs: Date.parse(top.at),
    service: top.service,
  };
}

/** How clearly a member shows the step: its larger ratio (p50 or p99). */
export function stepStrength(m: Pick<IncidentMember, 'ratio_p50' | 'ratio_p99'>): number {
  const r = Math.max(m.ratio_p50, m.ratio_p99);
  return Number.isFinite(r) ? r : 0;
}

/**
 * Index of the headline among an incident's members: the one that shows the
 * step best (largest ratio); on a tie, the first (found earliest).
 */
export function headlineIndex(
  members: ReadonlyArray<Pick<IncidentMember, 'ratio_p50' | 'ratio_p99'>>,
): number {
  let best = -1;
  let bestStrength = -Infinity;
  members.forEach((m, i) => {
    const s = stepStrength(m);
    if (s > bestStrength) {
      best = i;
      bestStrength = s;
    }
  });
  return best;
}
