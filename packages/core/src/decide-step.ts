/**
 * What a newly detected step does to the regressions (the server's commit step
 * applies it): a duplicate of a step already known on its series is left
 * alone; a step on a host's own resources is context, never a regression; a
 * step of an incident already found (stepJoins, or growing an open one:
 * growsIncident) joins its regression; a step on a load-rate series (time
 * in calls per second: `fsync-rate <process>`) only joins, never opens (load
 * moves a rate; a latency change shows on the operation's own series, which
 * opens); so does a step on a gap view its caller does not feel (gap-felt.ts);
 * else it opens one, unless its hosts lost CPU to the hypervisor and no
 * deploy explains it (held).
 *
 * Pure, and asked again as facts arrive: two facts cost a query, so the
 * decision names the one it needs (`need`) and the caller looks it up and
 * asks again with it.
 */
import {
  growsIncident,
  mayGrowByRollout,
  apartByRollout,
  mayMerge,
  serviceLinkOnly,
  stepJoins,
  type IncidentMember,
  type RolloutRef,
} from './incidents.ts';

const MIN = 60_000;

/** A step already known on a series (any status). */
export interface KnownOnset {
  series_id: number;
  onset: Date;
  /** Its onset uncertainty, ms. */
  unc: number;
}

/** A member of a regression near the step's onset, as grouping sees it. */
export interface NearIncidentMember extends IncidentMember {
  regression_id: string;
  /** Open or acknowledged (else resolved by a person). */
  open: boolean;
  /** The member its regression's numbers (and attribution) are of. */
  headline?: boolean;
}

export interface StepFacts<M extends NearIncidentMember> {
  /** The step, as a member would be (seriesId, labels, onset, uncertainty, ratios). */
  step: IncidentMember & { seriesId: string };
  /** Steps known on the step's series and its batch's others. */
  known: readonly KnownOnset[];
  /** Members of regressions around the onset. */
  near: readonly M[];
  /** The step's own top suspect's rollout, once looked up (undefined: not yet). */
  rollout?: RolloutRef | null;
  /** Whether its hosts lost CPU at the onset with no suspect to explain it, once looked up. */
  hostContention?: boolean;
  /** For a gap view: whether its edge's client view moved with it (core's callerFeelsGap), once looked up. */
  callerFelt?: boolean;
}

export type StepDecision<M extends NearIncidentMember> =
  | { kind: 'duplicate' }
  | { kind: 'host-resource' }
  | { kind: 'load-rate' }
  | { kind: 'gap-unfelt' }
  | { kind: 'need'; fact: 'rollout' | 'hostContention' | 'callerFelt' }
  | {
      kind: 'join';
      incident: M;
      /**
       * Other open regressions the step also belongs to: with it, they turn out
       * to be one incident, and are merged (see mergeInto).
       */
      merge: string[];
    }
  | { kind: 'hold' }
  | { kind: 'open' };

/** The same step again: same series, onsets within 10 min or 3 × the larger uncertainty. */
export function isDuplicateStep(
  known: readonly KnownOnset[],
  seriesId: number,
  onsetMs: number,
  uncertaintyMs: number,
): boolean {
  return known.some(
    (r) =>
      r.series_id === seriesId &&
      Math.abs(r.onset.getTime() - onsetMs) <=
        Math.max(10 * MIN, 3 * Math.max(uncertaintyMs, r.unc)),
  );
}

/**
 * A load-rate series: its value is the time a program spent in some calls per
 * second of a window (the agent's `fsync-rate <process>`: calls per second ×
 * time per call), so more work moves it as much as slower calls do. Its name
 * starts with `<op>-rate ` (the agent's naming; an HTTP route never does).
 */
export function isLoadRateSeries(labels: { op: string; name: string }): boolean {
  return labels.op !== '' && labels.name.startsWith(`${labels.op}-rate `);
}

export function decideStep<M extends NearIncidentMember>(f: StepFacts<M>): StepDecision<M> {
  const { step } = f;
  if (isDuplicateStep(f.known, Number(step.seriesId), step.onsetMs, step.uncertaintyMs))
    return { kind: 'duplicate' };
  // A host's own resources (stolen CPU, …) are context for other series' steps, never a regression.
  if (step.op === 'host') return { kind: 'host-resource' };
  const nearest = (ms: M[]) =>
    ms.sort((x, y) => Math.abs(x.onsetMs - step.onsetMs) - Math.abs(y.onsetMs - step.onsetMs))[0];
  // A link by service alone holds only when the step's own suspect names no other rollout.
  if (f.rollout === undefined && f.near.some((m) => m.rollout && serviceLinkOnly(m, step)))
    return { kind: 'need', fact: 'rollout' };
  const s = f.rollout === undefined ? step : { ...step, rollout: f.rollout };
  let incident = nearest(
    f.near.filter((m) => stepJoins(m, s) || (m.open && growsIncident(m, step))),
  );
  if (!incident && f.near.some((m) => m.open && mayGrowByRollout(m, step))) {
    // Hours after a canary: its later wave is known by its suspect, the same rollout.
    if (f.rollout === undefined) return { kind: 'need', fact: 'rollout' };
    const later = { ...step, rollout: f.rollout };
    incident = nearest(f.near.filter((m) => m.open && growsIncident(m, later)));
  }
  if (incident) return { kind: 'join', incident, merge: mergeWith(f.near, s, incident) };
  // More calls (other programs' test runs started) raise a rate with no call slower: context,
  // unless an operation's own series opened (joined above).
  if (isLoadRateSeries(step)) return { kind: 'load-rate' };
  // A gap is part of the caller's latency: a step the caller does not feel is context.
  if (step.view === 'gap') {
    if (f.callerFelt === undefined) return { kind: 'need', fact: 'callerFelt' };
    if (!f.callerFelt) return { kind: 'gap-unfelt' };
  }
  if (f.hostContention === undefined) return { kind: 'need', fact: 'hostContention' };
  return f.hostContention ? { kind: 'hold' } : { kind: 'open' };
}

/**
 * The open regressions other than `joined`'s that the step is one incident
 * with (stepJoins one of their members), and whose headline is one
 * incident with `joined`'s headline by onset (mayMerge): the step links them,
 * so they are one incident. Only open ones: a regression a person resolved is
 * joined, never merged.
 */
function mergeWith<M extends NearIncidentMember>(
  near: readonly M[],
  step: IncidentMember,
  joined: M,
): string[] {
  if (!joined.open) return [];
  const headlineOf = (id: string) =>
    near.find((m) => m.regression_id === id && m.headline) ??
    near.find((m) => m.regression_id === id);
  const head = headlineOf(joined.regression_id) ?? joined;
  const out = new Set<string>();
  for (const m of near) {
    if (m.regression_id === joined.regression_id || out.has(m.regression_id) || !m.open) continue;
    if (!stepJoins(m, step)) continue;
    const other = headlineOf(m.regression_id) ?? m;
    if (!mayMerge(head, other)) continue;
    // Linked by service alone, two regressions whose suspects name different rollouts stay two.
    const byService = serviceLinkOnly(m, step) || serviceLinkOnly(joined, step);
    if (byService && apartByRollout(head, other)) continue;
    out.add(m.regression_id);
  }
  return [...out].sort((a, b) => Number(a) - Number(b));
}
