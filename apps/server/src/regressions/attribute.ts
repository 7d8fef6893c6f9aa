/**
 * The attribution call for one regression: read what core's scoring needs
 * (host cohorts' histograms around the onset, the series' hosts, deploy
 * markers near it), rank suspects and split cohorts in core, write them to
 * the row, and refresh a firing alert when the answer changed.
 */
import {
  findCohort,
  incidentSuspects,
  LOOKBACK_MS,
  markerWindow,
  rankSuspects,
  type Cohort,
  type CohortRow,
  type Marker,
  type Suspect,
  detectOptionsFor,
} from '@onset/core';
import type { PoolClient } from '../db/pool.ts';
import { touchesSeriesSql } from '../deploys/queries.ts';
import { happeningAt } from '../alerts/state.ts';
import { refreshRegressionAlertIfFiring } from './alerting.ts';
import { regressionJson, writeAttribution, type RegressionRow } from './store.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
/** Cohort windows around the onset. */
const COHORT_WINDOW_MS = 2 * HOUR;

const floorMinute = (ms: number) => Math.floor(ms / MIN) * MIN;
/**
 * Other members weighed besides the headline: one per (service, callee) not
 * the headline's (the markers in scope are the same within one), strongest first.
 */
const MEMBERS_WEIGHED = 4;

/** What attribution needs to know of a step: its series and onset (a regression row has these). */
export type AttributionTarget = Pick<
  RegressionRow,
  'series_id' | 'service' | 'peer' | 'metric' | 'onset' | 'onset_uncertainty_ms'
> & { view: string };

export interface Attribution {
  suspects: Suspect[];
  cohort: Cohort | null;
  /** The one slow host, when the cohort narrows the step to one. */
  host: string | null;
}

/**
 * Cohort split and ranked suspects for one regression, written to its row
 * (and returned): the cohort and host of its headline's series, the suspects
 * of the incident (core's incidentSuspects over every member's own). With
 * `alert`, a changed top suspect or cohort refreshes the firing alert.
 */
export async function attribute(
  c: PoolClient,
  r: RegressionRow,
  H: number,
  now: number,
  opts: { alert: boolean },
): Promise<Attribution> {
  const headline = await attributionOf(c, r, H);
  const perMember = [headline.suspects];
  for (const m of await otherMembers(c, r)) perMember.push((await attributionOf(c, m, H)).suspects);
  const found = { ...headline, suspects: incidentSuspects(perMember) };
  const { suspects, cohort, host } = found;
  const changed =
    JSON.stringify(suspects[0]?.deploy_id ?? null) !==
      JSON.stringify(r.suspects[0]?.deploy_id ?? null) ||
    JSON.stringify(cohort) !== JSON.stringify(r.cohort);
  const row = await writeAttribution(c, r.id, { suspects, cohort, host, nowMs: now });
  if (opts.alert && changed && row && row.status !== 'resolved') {
    await refreshRegressionAlertIfFiring(c, regressionJson(row), { now: happeningAt(now) });
  }
  return found;
}

/**
 * The regression's members that see other markers than its headline (another
 * service or callee), the strongest step of each, as attribution targets.
 */
async function otherMembers(c: PoolClient, r: RegressionRow): Promise<AttributionTarget[]> {
  const { rows } = await c.query<AttributionTarget>(
    `SELECT series_id, service, view, peer, metric, onset, onset_uncertainty_ms FROM (
       SELECT DISTINCT ON (service, peer) series_id::text, service, view, peer, metric, onset,
              onset_uncertainty_ms, greatest(ratio_p50, ratio_p99) AS strength
         FROM regression_members
        WHERE regression_id = $1 AND NOT (service = $2 AND peer = $3)
        ORDER BY service, peer, strength DESC, series_id) m
      ORDER BY strength DESC, series_id LIMIT $4`,
    [r.id, r.service, r.peer ?? '', MEMBERS_WEIGHED],
  );
  return rows;
}

/**
 * Cohort split and ranked suspects of a step on a series, with the data
 * through `H` (also of a step not opened yet: a rollout's later wave is
 * recognised by its suspect).
 */
export async function attributionOf(
  c: PoolClient,
  r: AttributionTarget,
  H: number,
): Promise<Attribution> {
  const onset = r.onset.getTime();
  const unc = r.onset_uncertainty_ms;
  const floorUs = detectOptionsFor(r.view).floor ?? 0;
  const { rows: cohortRows } = await c.query<CohortRow & { after: boolean }>(
    `SELECT res.host, res.attrs, h.minute >= $3 AS after, h.idx, h.cnt
       FROM histograms h JOIN resources res ON res.id = h.resource_id
      WHERE h.series_id = $1
        AND ((h.minute >= $2 AND h.minute < $4) OR (h.minute >= $3 AND h.minute < $5))`,
    [
      r.series_id,
      new Date(onset - COHORT_WINDOW_MS),
      new Date(floorMinute(onset + unc) + MIN),
      new Date(Math.max(onset - COHORT_WINDOW_MS + MIN, floorMinute(onset - unc))),
      new Date(Math.min(H, onset + COHORT_WINDOW_MS)),
    ],
  );
  const cohort = findCohort(cohortRows, { metric: r.metric, floorUs });
  const { rows: hostRows } = await c.query<{ host: string }>(
    `SELECT DISTINCT res.host FROM series_resources sr JOIN resources res ON res.id = sr.resource_id
      WHERE sr.series_id = $1 AND res.host <> '' ORDER BY 1`,
    [r.series_id],
  );
  const hosts = hostRows.map((h) => h.host);
  // Later markers too: a rollout's later waves cannot have caused this onset (their time fit is
  // nil) but they belong to its host list.
  const win = { ...markerWindow(onset, unc), toMs: onset + LOOKBACK_MS };
  const { rows: markerRows } = await c.query<Omit<Marker, 'atMs'> & { at: Date }>(
    `SELECT id::text, service, hosts, kind, component, from_version, to_version, commit, url, description, at, source
       FROM deploys
      WHERE at >= $1 AND at <= $2 AND ${touchesSeriesSql(3, 4, 5)}`,
    [new Date(win.fromMs), new Date(win.toMs), r.service, r.peer || null, hosts],
  );
  const markers: Marker[] = markerRows.map(({ at, ...m }) => ({ ...m, atMs: at.getTime() }));
  await addHostChanges(c, markers);
  const afterHosts = [...new Set(cohortRows.filter((x) => x.after && x.host).map((x) => x.host))];
  const suspects = rankSuspects(markers, {
    onsetMs: onset,
    uncertaintyMs: unc,
    service: r.service,
    view: r.view,
    peer: r.peer || null,
    hosts,
    ...(afterHosts.length ? { afterHosts } : {}),
    cohort,
  });
  const host =
    cohort && cohort.slow_hosts.length === 1 && cohort.fast_hosts.length > 0
      ? cohort.slow_hosts[0]!
      : null;
  return { suspects, cohort, host };
}

/**
 * Inferred markers fold the changes of every (service, host) of a rollout;
 * their own times per host (deploy_inference_values) keep two services'
 * rollouts to the same version in the same hour apart.
 */
async function addHostChanges(c: PoolClient, markers: Marker[]): Promise<void> {
  const inferred = markers.filter((m) => m.source === 'inferred');
  if (!inferred.length) return;
  const { rows } = await c.query<{ id: string; service: string; host: string; at: Date }>(
    `SELECT deploy_id::text AS id, service, host, first_at AS at FROM deploy_inference_values
      WHERE deploy_id = ANY($1::bigint[]) AND host <> ''`,
    [inferred.map((m) => m.id)],
  );
  for (const m of inferred)
    m.changes = rows
      .filter((x) => x.id === m.id)
      .map((x) => ({ service: x.service, host: x.host, atMs: x.at.getTime() }));
}
