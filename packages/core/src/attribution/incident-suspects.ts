/**
 * An incident's suspects (docs/regressions.md "Attribution"): each member of
 * a regression is scored on its own series, which weighs its own service's,
 * its callee's and its hosts' markers only. A caller's view of a chain
 * (web → api → store) never sees the store's bump, so ranking the headline's
 * suspects alone can name the api's release minutes earlier for the store's
 * incident. The incident's list is every member's, one entry per rollout at
 * the best score any member gave it.
 */
import { MAX_SUSPECTS, type Suspect } from './suspects.ts';

/** One rollout: the two suspects share a marker (every wave of a rollout is one suspect). */
const sameRollout = (a: Suspect, b: Suspect) =>
  a.deploy_ids.some((id) => b.deploy_ids.includes(id));

/**
 * The suspects of an incident from its members' own lists, the headline's
 * first: per rollout the best-scored entry (the headline's on a tie, its
 * reason and hosts are of the series the regression shows), best first.
 */
export function incidentSuspects(perMember: ReadonlyArray<readonly Suspect[]>): Suspect[] {
  const best: Suspect[] = [];
  for (const list of perMember)
    for (const s of list) {
      const i = best.findIndex((b) => sameRollout(b, s));
      if (i < 0) best.push(s);
      else if (s.score > best[i]!.score) best[i] = s;
    }
  // Stable: equal scores keep the headline's order.
  return best.sort((a, b) => b.score - a.score).slice(0, MAX_SUSPECTS);
}
