/**
 * What a batch's steps do to the regressions table, in one transaction:
 * new steps open regressions (attributed, alerted), open regressions of the
 * series fed get their after level and are resolved when latency is back,
 * and the batch's detector states are checkpointed. Also the re-attribution
 * of young regressions at the end of a pass.
 */
import { storeRegressionHints } from '../evidence/evidence.ts';
import {
  burstVerdict,
  compareSteps,
  decideStep,
  INCIDENT_GROWTH_MS,
  INCIDENT_ROLLOUT_GROWTH_MS,
  INCIDENT_WINDOW_MAX_MS,
  isLoadRateSeries,
  onsetOwnOf,
  rolloutOf,
  stepRecovery,
  type MinutePoint,
  type OnsetOwn,
  type StepFacts,
  detectOptionsFor,
} from '@onset/core';
import { transactionOn, type PoolClient } from '../db/pool.ts';
import { happeningAt } from '../alerts/state.ts';
import { regressionsDetected, regressionsHeld } from '../observability/metrics.ts';
import {
  HOLD_DECIDED_POINTS,
  alertRegression,
  regressionAlerted,
  stepHeld,
  refreshRegressionAlertIfFiring,
  resolveRegressionAlert,
} from '../regressions/alerting.ts';
import { attribute, attributionOf, type AttributionTarget } from '../regressions/attribute.ts';
import { hostCpuRiseAt } from './host-cpu.ts';
import { callerFeltGap } from './gap-felt.ts';
import { fmtMs, level, median, ratio, round, roundMs } from '../regressions/levels.ts';
import { lockRegressionCommit } from './lock.ts';
import { onsetOwnDirs } from '../config.ts';
import { countEvents } from './points.ts';
import { readLabels, type StateCache } from './state-cache.ts';
import { advanceThroughs, writeStates } from './state.ts';
import {
  hostsReporting,
  insertMember,
  knownOnsets,
  makeHeadline,
  membersNear,
  moveMembers,
  resolveIfAllRecovered,
  strongestMember,
  unresolvedMembersOf,
  updateMember,
  type NearMember,
} from '../regressions/members.ts';
import {
  dueForReattribution,
  insertRegression,
  markMerged,
  markTransient,
  regressionById,
  regressionJson,
  updateHeadlineLevels,
  type Level,
} from '../regressions/store.ts';
import {
  HOUR_MS as HOUR,
  MINUTE_MS as MIN,
  type BatchWork,
  type PassResult,
  type StepEvent,
} from './work.ts';

/** Points that decide whether latency is back (stepRecovery). */
const RECOVERY_POINTS = 30;
/** Points after the onset that "after" levels are medians over. */
const AFTER_POINTS = 120;
/** Re-rank suspects and cohorts of regressions this young on every pass (late markers, more data). */
const REATTRIBUTE_FOR_MS = 2 * HOUR;
/** A member's hosts: those that reported its series in this long after the onset. */
const MEMBER_HOSTS_MS = 2 * HOUR;

/** Write one batch: new regressions, updated open ones, checkpoints — one transaction. */
export async function commit(
  cache: StateCache,
  c: PoolClient,
  work: BatchWork,
  H: number,
  now: number,
  dbThrough: Map<number, number>,
  result: PassResult,
): Promise<void> {
  await transactionOn(c, async (c) => {
    const touched = new Set<number>([...work.fed.keys()]);
    const steps = await openRegressions(c, work.events, H, now, result);
    for (const id of steps.series) touched.add(id);
    // New regressions get their alert after the update below, which may find them already over.
    const updated = touched.size
      ? await updateOpen(cache, c, [...touched], work.fed, H, now, result, steps.opened)
      : false;
    // Regressions whose headline a joining member took: their firing alert is refreshed (not re-paged).
    for (const id of steps.newHeadlines) {
      const row = await regressionById(c, id, { unresolved: true });
      if (row)
        await refreshRegressionAlertIfFiring(c, regressionJson(row), { now: happeningAt(now) });
    }
    await writeStates(
      c,
      H,
      work.checkpoint.map((id) => [id, cache.detectors.get(id)!.det.encode()] as const),
    );
    await advanceThroughs(c, H, work.advance);
    // Only checkpoints (nearly every batch): they need not wait for the WAL flush. Lost in a
    // crash, the states are replayed from older checkpoints to the same steps, and a later
    // commit that writes regressions flushes these with it (the WAL is in order).
    if (!work.events.length && !updated) await c.query('SET LOCAL synchronous_commit TO off');
  });
  for (const id of work.checkpoint) dbThrough.set(id, H);
  for (const id of work.advance) dbThrough.set(id, H);
}

/**
 * One incident, one regression: a new step joins the regression of a step
 * already found around the same onset on a related series (core's
 * sameIncident: views of one edge, series of one service), or of an open
 * regression it grows (core's growsIncident: a further step on one of its
 * series within 30 minutes, a rollout's later waves), else opens one.
 * Steps already known on their series (any status) are left alone. A member
 * that joins never raises an alert (the incident has paged once, or will at
 * the end of this batch); when it shows the step better than the headline, it
 * becomes the headline and the regression is re-attributed to its series.
 *
 * Whatever the order: a batch's steps are grouped earliest onset first, then
 * clearest (core's compareSteps), not in series-id order; the clearest member
 * heads the regression whatever joined first; and a step that belongs to two open
 * regressions (found apart, in other batches or passes) merges them into the
 * older one (mergeInto). Onset's own noise (the agent's probes, Onset's own
 * database: core's onsetOwnOf) groups only with its own kind and never pages.
 */
async function openRegressions(
  c: PoolClient,
  events: StepEvent[],
  H: number,
  now: number,
  result: PassResult,
): Promise<OpenedSteps> {
  const out: OpenedSteps = { series: [], opened: [], newHeadlines: [], merged: new Set() };
  // A burst confirmed after it had ended (shape 'transient') is not a regression to open.
  const ups = events.filter(
    (e) => e.change.direction === 'regression' && (e.change.shape ?? 'step') !== 'transient',
  );
  if (!ups.length) return out;
  // Grouping must see the steps other servers' shards committed: their writes and ours go one at a time.
  await lockRegressionCommit(c);
  const ids = [...new Set(ups.map((e) => e.seriesId))];
  const existing = await knownOnsets(c, ids);
  const labelsOf = await readLabels(c, ids);
  // Load-rate steps only join (decideStep): decided after the batch's others, so they can.
  const rate = (e: StepEvent) => {
    const l = labelsOf.get(e.seriesId);
    return l && isLoadRateSeries(l) ? 1 : 0;
  };
  const onsets = ups.map((e) => e.change.t);
  const near = await membersNear(
    c,
    Math.min(...onsets) -
      Math.max(INCIDENT_WINDOW_MAX_MS, INCIDENT_GROWTH_MS, INCIDENT_ROLLOUT_GROWTH_MS),
    Math.max(...onsets) + INCIDENT_WINDOW_MAX_MS,
  );
  const ownDirs = onsetOwnDirs();
  const steps: Array<{ e: StepEvent; member: NearMember; labels: StepLabels }> = [];
  for (const e of ups) {
    const ch = e.change;
    const labels = labelsOf.get(e.seriesId);
    if (!labels) continue; // the series was deleted meanwhile
    const floor = detectOptionsFor(labels.view).floor ?? 0;
    const before = level(ch.before);
    const after = level(ch.after);
    const member: NearMember = {
      regression_id: '',
      open: true,
      seriesId: String(e.seriesId),
      headline: false,
      ...labels,
      onsetMs: ch.t,
      uncertaintyMs: ch.onsetUncertaintyPoints * MIN,
      ratio_p50: ratio(before.p50_ms, after.p50_ms, floor / 1000),
      ratio_p99: ratio(before.p99_ms, after.p99_ms, floor / 1000),
      rollout: null,
      own: null,
    };
    steps.push({ e, member, labels });
  }
  steps.sort((a, b) => rate(a.e) - rate(b.e) || compareSteps(a.member, b.member));
  for (const { e, member, labels } of steps) {
    const ch = e.change;
    const unc = member.uncertaintyMs;
    const before = level(ch.before);
    const after = level(ch.after);
    const target = stepTarget(e.seriesId, labels, ch, unc);
    let hosts: string[] | undefined;
    const hostsOf = async () =>
      (hosts ??= await hostsReporting(c, e.seriesId, ch.t, Math.min(H, ch.t + MEMBER_HOSTS_MS)));
    // Core's decideStep decides; the facts that cost a query are looked up when it asks for them.
    const facts: StepFacts<NearMember> = { step: member, known: existing, near };
    let decision = decideStep(facts);
    if (!['duplicate', 'host-resource', 'load-rate'].includes(decision.kind)) {
      // Onset's own noise is known by its spans: with it, the decision is asked again.
      member.own = await ownNoiseOf(c, e.seriesId, labels.name, ch.t, H, ownDirs);
      if (member.own) decision = decideStep(facts);
    }
    for (; decision.kind === 'need'; decision = decideStep(facts)) {
      if (decision.fact === 'rollout') {
        const { suspects } = await attributionOf(c, target, H);
        facts.rollout = rolloutOf(suspects[0]);
      } else if (decision.fact === 'callerFelt')
        facts.callerFelt = await callerFeltGap(c, labels, ch.metric, ch.t, H);
      else if (decision.fact === 'hostContention')
        facts.hostContention = await heldForHostCpu(c, target, await hostsOf(), H, result);
      else throw new Error(`decideStep asked for an unknown fact: ${String(decision.fact)}`);
    }
    if (decision.kind === 'gap-unfelt') regressionsHeld.inc({ reason: 'gap_not_felt_by_caller' });
    if (
      decision.kind === 'duplicate' ||
      decision.kind === 'host-resource' ||
      decision.kind === 'load-rate' ||
      decision.kind === 'gap-unfelt'
    )
      continue;
    if (decision.kind === 'hold') {
      result.regressions.held++;
      continue;
    }
    if (facts.rollout !== undefined) member.rollout = facts.rollout;
    after.count = await countEvents(c, e.seriesId, ch.t, H);
    const step = {
      seriesId: e.seriesId,
      labels,
      change: ch,
      uncertaintyMs: unc,
      detectedMs: now,
      confidence: round(ch.confidence, 6),
      before,
      after,
      ratioP50: member.ratio_p50,
      ratioP99: member.ratio_p99,
      afterThroughMs: H,
    };
    const stepHosts = await hostsOf();
    existing.push({ series_id: e.seriesId, onset: new Date(ch.t), unc });
    out.series.push(e.seriesId);
    if (decision.kind === 'join') {
      // The step links these regressions: they are one incident, kept as the oldest.
      const all = [decision.incident.regression_id, ...decision.merge];
      const id = all.reduce((a, b) => (BigInt(b) < BigInt(a) ? b : a));
      await insertMember(c, { ...step, regressionId: id, hosts: stepHosts, headline: false });
      // As membersNear reads it: a member carries its regression's top suspect, not its own.
      const regressionRollout = near.find((m) => m.regression_id === id)?.rollout;
      near.push({ ...member, regression_id: id, rollout: regressionRollout ?? member.rollout });
      for (const other of all)
        if (other !== id) await mergeInto(c, id, other, near, now, out, result);
      await headWithStrongest(c, id, H, now, near, out);
      result.regressions.grouped++;
      continue;
    }
    const row = await insertRegression(c, { ...step, own: member.own });
    await insertMember(c, { ...step, regressionId: row.id, hosts: stepHosts, headline: true });
    const { suspects } = await attribute(c, row, H, now, { alert: false });
    near.push({
      ...member,
      regression_id: row.id,
      headline: true,
      rollout: rolloutOf(suspects[0]),
    });
    // Hints before the alert is raised, so its text (and every webhook's) names the likely mechanism.
    await storeRegressionHints(c, row, H);
    result.regressions.opened++;
    regressionsDetected.inc({ op: labels.op, view: labels.view });
    out.opened.push(row.id);
  }
  return out;
}

type StepLabels = { service: string; op: string; view: string; name: string; peer: string };

/** Exemplar spans read to tell Onset's own noise (core's onsetOwnOf). */
const OWN_SAMPLE = 5;

/**
 * Whether a step's series is Onset's own noise: core's onsetOwnOf over its
 * name and a few of its stored spans around the onset (exemplars keep their
 * attributes; the agent marks its probes' spans `onset.source=probe`).
 */
async function ownNoiseOf(
  c: PoolClient,
  seriesId: number,
  name: string,
  onsetMs: number,
  H: number,
  ownDirs: readonly string[],
): Promise<OnsetOwn | null> {
  const { rows } = await c.query<{ attrs: Record<string, unknown> | null }>(
    `SELECT attrs FROM observations
      WHERE series_id = $1 AND exemplar AND attrs IS NOT NULL AND start_time >= $2 AND start_time < $3
      ORDER BY start_time DESC LIMIT $4`,
    [seriesId, new Date(onsetMs - HOUR), new Date(H), OWN_SAMPLE],
  );
  return onsetOwnOf(
    { name },
    rows.map((r) => r.attrs),
    ownDirs,
  );
}

/**
 * Merge the open regression `fromId` into `intoId` (a step showed they are one
 * incident): its members move, it is closed as merged (`merged_into`), and its
 * firing alert resolves saying so; the survivor is re-headlined by the caller
 * and its alert re-rendered (never paged again for the merge).
 */
async function mergeInto(
  c: PoolClient,
  intoId: string,
  fromId: string,
  near: NearMember[],
  now: number,
  out: OpenedSteps,
  result: PassResult,
): Promise<void> {
  await moveMembers(c, fromId, intoId);
  await markMerged(c, fromId, intoId, now);
  await resolveRegressionAlert(c, fromId, {
    now: happeningAt(now),
    reason: `merged into regression ${intoId}: the same incident`,
  });
  for (const m of near)
    if (m.regression_id === fromId) Object.assign(m, { regression_id: intoId, headline: false });
  // Opened in this batch and merged before its alert: the survivor's alert covers the incident.
  out.opened = out.opened.filter((x) => x !== fromId);
  out.newHeadlines = out.newHeadlines.filter((x) => x !== fromId);
  out.merged.add(intoId);
  result.regressions.merged = (result.regressions.merged ?? 0) + 1;
}

/**
 * After a member joined (or a merge): the member that shows the step best
 * heads the regression (core's headlineIndex; the current one on a tie), and
 * the regression is re-attributed (its suspects are every member's, so a
 * joining callee's view can name its own marker first). A new headline
 * recomputes its hints; a new headline, a new top suspect or a merge
 * re-renders a firing alert from the one alert text once the batch's levels
 * are in (it never pages again).
 */
async function headWithStrongest(
  c: PoolClient,
  id: string,
  H: number,
  now: number,
  near: NearMember[],
  out: OpenedSteps,
): Promise<void> {
  const best = await strongestMember(c, id);
  if (!best) return;
  const moved = !best.headline;
  if (moved) {
    await makeHeadline(c, id, Number(best.series_id), best.onset, now);
    for (const m of near)
      if (m.regression_id === id)
        m.headline = m.seriesId === best.series_id && m.onsetMs === best.onset.getTime();
  }
  const row = await regressionById(c, id);
  if (!row) return;
  const topBefore = row.suspects[0]?.deploy_id ?? null;
  const { suspects } = await attribute(c, row, H, now, { alert: false });
  for (const m of near) if (m.regression_id === id) m.rollout = rolloutOf(suspects[0]);
  if (moved) await storeRegressionHints(c, row, H);
  const newTop = (suspects[0]?.deploy_id ?? null) !== topBefore;
  if (!moved && !newTop && !out.merged.has(id)) return;
  if (!out.opened.includes(id) && !out.newHeadlines.includes(id)) out.newHeadlines.push(id);
}

/** What a batch's new steps did: the series they were on, and what is left to alert. */
interface OpenedSteps {
  /** Regressions that took another's members in this batch (their alert is re-rendered). */
  merged: Set<string>;
  /** Series whose step opened or joined a regression (their members are updated next). */
  series: number[];
  /** Regressions opened: each is paged once the update finds its step held (or at once). */
  opened: string[];
  /** Regressions (not opened in this batch) whose headline or top suspect a joining member changed. */
  newHeadlines: string[];
}

/** What attribution needs of a step not opened yet (a regression row has the same fields). */
function stepTarget(
  seriesId: number,
  labels: { service: string; view: string; peer: string },
  ch: StepEvent['change'],
  unc: number,
): AttributionTarget {
  return {
    series_id: String(seriesId),
    service: labels.service,
    view: labels.view,
    peer: labels.peer,
    metric: ch.metric,
    onset: new Date(ch.t),
    onset_uncertainty_ms: unc,
  };
}

/**
 * A step that would open a regression is held back when its hosts lost CPU to
 * the hypervisor at its onset (core's hostCpuRise) and no deploy touching the
 * series explains it (docs/regressions.md "Held for host contention"): the
 * host's neighbours, not its owners' change. Counted and listed in the pass's
 * result (the scheduler logs it), never opened.
 */
async function heldForHostCpu(
  c: PoolClient,
  target: AttributionTarget,
  hosts: string[],
  H: number,
  result: PassResult,
): Promise<boolean> {
  const rise = await hostCpuRiseAt(c, hosts, target.onset.getTime(), H);
  if (!rise) return false;
  const { suspects } = await attributionOf(c, target, H);
  if (suspects.length) return false;
  regressionsHeld.inc({ reason: 'host_cpu_steal' });
  (result.held ??= []).push({
    series_id: target.series_id,
    onset: target.onset.toISOString(),
    hosts,
    steal_before_ms_per_s: round(rise.beforeMsPerS, 3),
    steal_after_ms_per_s: round(rise.afterMsPerS, 3),
  });
  return true;
}

/**
 * Members of open and acknowledged regressions on the series fed in this
 * pass: levels since the onset from the detector's recent points, events
 * counted once (after_through), and whether latency is back at the before
 * level. The headline member's numbers are the regression's; the regression
 * resolves when every member is back. True when it wrote anything.
 */
async function updateOpen(
  cache: StateCache,
  c: PoolClient,
  ids: number[],
  fed: Map<number, MinutePoint[]>,
  H: number,
  now: number,
  result: PassResult,
  opened: readonly string[],
): Promise<boolean> {
  // Opened in this batch and not alerted yet.
  const pendingAlerts = new Set(opened);
  const incidents = new Set<string>();
  // Incidents with a member closed as a burst in this pass (labelled transient if they resolve unpaged).
  const bursts = new Set<string>();
  // Young incidents: has any member's step held long enough to alert (alerting.ts)?
  const held = new Map<string, boolean>();
  let members = await unresolvedMembersOf(c, ids);
  if (members.length) {
    // Members of one incident may sit in several servers' shards: update them one server at a time,
    // reading them again once the lock is ours (another server may just have resolved their regression).
    await lockRegressionCommit(c);
    members = await unresolvedMembersOf(c, ids);
  }
  for (const m of members) {
    const sid = Number(m.series_id);
    const tracked = cache.detectors.get(sid);
    if (!tracked) continue;
    const floor = tracked.det.opts.floor;
    const since = m.onset.getTime() + m.onset_uncertainty_ms;
    const pts = tracked.det.recentPoints().filter((p) => p.t >= since);
    const newCount = (fed.get(sid) ?? []).reduce(
      (n, p) => (p.t >= m.after_through.getTime() ? n + p.count : n),
      0,
    );
    const after: Level = { ...m.after, count: m.after.count + newCount };
    if (pts.length) {
      const last = pts.slice(-AFTER_POINTS);
      after.p50_ms = roundMs(median(last.map((p) => p.p50)) / 1000);
      after.p99_ms = roundMs(median(last.map((p) => p.p99)) / 1000);
    }
    const recovery = stepRecovery(m.change, pts.slice(-RECOVERY_POINTS), { floor });
    // A burst (over within minutes of its onset, core's burstVerdict) closes
    // at once; if it was never alerted its regression is labelled transient.
    const onsetMs = m.onset.getTime();
    const fromOnset = tracked.det.recentPoints().filter((p) => p.t >= onsetMs);
    const burst =
      !recovery.resolved && fromOnset.length <= HOLD_DECIDED_POINTS
        ? burstVerdict(m.change, fromOnset, floor)
        : null;
    const levels = {
      after,
      ratioP50: ratio(m.before.p50_ms, after.p50_ms, floor / 1000),
      ratioP99: ratio(m.before.p99_ms, after.p99_ms, floor / 1000),
      afterThroughMs: H,
    };
    await updateMember(c, m, {
      ...levels,
      recoveredAtMs: recovery.resolved
        ? pts[pts.length - 1]!.t + MIN
        : burst?.over
          ? fromOnset[fromOnset.length - 1]!.t + MIN
          : null,
      recovery: recovery.resolved
        ? `latency returned to the before level (${m.metric} ${fmtMs(recovery.level / 1000)} ms)`
        : burst?.over
          ? `a burst of ${burst.points} min: latency back at the before level (transient, not paged)`
          : null,
    });
    if (burst?.over) bursts.add(m.regression_id);
    if (m.headline) await updateHeadlineLevels(c, m.regression_id, { ...levels, nowMs: now });
    incidents.add(m.regression_id);
    if (pts.length <= HOLD_DECIDED_POINTS + 5)
      held.set(m.regression_id, !!held.get(m.regression_id) || stepHeld(m.change, pts, floor));
  }
  for (const id of incidents) {
    const resolved = await resolveIfAllRecovered(c, id, now);
    const wasPending = pendingAlerts.delete(id);
    if (resolved) {
      result.regressions.resolved++;
      if (bursts.has(id) && !(await regressionAlerted(c, id))) await markTransient(c, id);
      if (!wasPending)
        await resolveRegressionAlert(c, id, {
          now: happeningAt(now),
          reason: 'latency returned to the before level',
        });
    } else {
      if (!wasPending) result.regressions.updated++;
      // Alerted once its step has held; a young one opened earlier is alerted when it does.
      const hold = held.get(id);
      if (wasPending ? hold !== false : hold === true && !(await regressionAlerted(c, id))) {
        const fresh = await regressionById(c, id);
        await alertRegression(c, regressionJson(fresh!), { now: happeningAt(now) });
      }
    }
  }
  // Opened on a series without new points in this pass (a zoomed old step): alert as is.
  for (const id of [...pendingAlerts]) {
    pendingAlerts.delete(id);
    const fresh = await regressionById(c, id, { unresolved: true });
    if (fresh) await alertRegression(c, regressionJson(fresh), { now: happeningAt(now) });
  }
  return members.length > 0;
}

/**
 * Young regressions: markers posted late and more data after the onset can
 * change suspects and cohort (a canary's later waves move more hosts). Once
 * per pass — every regression not attributed by this pass already (`now` is
 * the pass's time) — while it is young in wall-clock time or in data time.
 */
export async function reattribute(
  c: PoolClient,
  H: number,
  now: number,
  _result: PassResult,
  shards: { count: number; shards: readonly number[] } | null = null,
): Promise<void> {
  const young = { detectedAfterMs: now - REATTRIBUTE_FOR_MS, onsetAfterMs: H - REATTRIBUTE_FOR_MS };
  for (const r of await dueForReattribution(c, young, now, shards)) {
    await transactionOn(c, async (c) => {
      await lockRegressionCommit(c);
      await attribute(c, r, H, now, { alert: true });
    });
  }
}
