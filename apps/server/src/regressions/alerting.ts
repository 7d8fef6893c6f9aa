/**
 * Regression alerting policy: one alert per regression — one incident, so one
 * page per incident, never one per member series (a member that joins later
 * only refreshes the firing alert's details, commit.ts) — raised when it opens
 * (or its attribution changes while it fires), resolved when latency returns
 * or someone marks it resolved. Severity comes from core's
 * regressionSeverity; the transitions themselves are alerts/state.ts.
 */
import type { Queryable } from '../db/pool.ts';
import { regressionAlertKey, type Regression } from '@onset/contract';
import { regressionSeverity, type MinutePoint, type StepChange } from '@onset/core';
import { acknowledgeAlert, fireAlert, resolveAlert, type Reopened } from '../alerts/state.ts';
import { alertEverRaised, firingAlertId, type AlertRow } from '../alerts/store.ts';
import type { AlertKindHooks } from '../alerts/kinds.ts';
import { slosCoveringSeries } from '../slos/store.ts';
import { getRegression, markAcknowledged, markResolved } from './store.ts';

/**
 * The regression an alert is raised for: the contract's Regression (what regressionJson
 * gives), of which the identity is required and the rest is used when present.
 */
export type RegressionForAlert = Pick<Regression, 'id' | 'service' | 'op' | 'view' | 'name'> &
  Partial<
    Pick<
      Regression,
      | 'peer'
      | 'host'
      | 'onset'
      | 'before'
      | 'after'
      | 'ratio_p50'
      | 'ratio_p99'
      | 'metric'
      | 'suspects'
      | 'cohort'
      | 'hints'
      | 'shape'
      | 'band'
      | 'own'
    >
  >;

/**
 * A new regression is alerted (paged or ticketed) only once its step has
 * held ALERT_HOLD_POINTS minutes since the onset, its last two minutes
 * still on the after side of the midpoint: a burst of a few minutes, which
 * the detector confirms after 4, is over by then, recovers and is closed
 * without an alert. Past HOLD_DECIDED_POINTS minutes a regression that has
 * not recovered is alerted whatever its last minutes.
 */
export const ALERT_HOLD_POINTS = 8;
export const HOLD_DECIDED_POINTS = 30;

/** Has the step of `change` held? `since`: the points since its onset, oldest first. */
export function stepHeld(
  change: StepChange,
  since: readonly MinutePoint[],
  floor: number,
): boolean {
  if (since.length >= HOLD_DECIDED_POINTS) return true;
  if (since.length < ALERT_HOLD_POINTS) return false;
  const key = change.metric;
  const lb = Math.log(change.before[key] + floor);
  const la = Math.log(change.after[key] + floor);
  const mid = (lb + la) / 2;
  const dir = Math.sign(la - lb);
  return since.slice(-2).every((p) => dir * (Math.log(Math.max(p[key], 0) + floor) - mid) > 0);
}

/** Was an alert ever raised for this regression (firing, acknowledged or resolved)? */
export async function regressionAlerted(
  db: Queryable,
  regressionId: string | number,
): Promise<boolean> {
  return alertEverRaised(db, regressionAlertKey(regressionId));
}

/**
 * Raise (or refresh) the alert for a newly detected regression (its text:
 * alerts/text.ts, from the details below). Severity:
 * page when the regression pushes the p99 of a series an SLO watches past
 * that SLO's threshold, or when latency grew ≥ 10× (p50 or p99); ticket
 * otherwise. Idempotent per regression id. Pass a PoolClient to run inside
 * the caller's transaction. The detection pass goes through alertRegression.
 */
export async function raiseRegressionAlert(
  db: Queryable,
  regression: RegressionForAlert,
  opts: { now?: number; reopened?: Reopened } = {},
): Promise<AlertRow> {
  const now = opts.now ?? Date.now();
  const touched = await slosCoveringSeries(db, regression);
  const severity = regressionSeverity(
    {
      ratio_p50: regression.ratio_p50 ?? null,
      ratio_p99: regression.ratio_p99 ?? null,
      after_p99_ms: regression.after?.p99_ms ?? null,
    },
    touched.map((t) => t.threshold_ms),
  );
  const { alert } = await fireAlert(
    db,
    {
      type: 'regression',
      alertKey: regressionAlertKey(regression.id),
      severity,
      service: regression.service,
      op: regression.op,
      view: regression.view,
      seriesName: regression.name,
      regressionId: String(regression.id),
      details: {
        peer: regression.peer ?? null,
        host: regression.host ?? null,
        onset: regression.onset ?? null,
        before: regression.before ?? null,
        after: regression.after ?? null,
        ratio_p50: regression.ratio_p50 ?? null,
        ratio_p99: regression.ratio_p99 ?? null,
        metric: regression.metric ?? null,
        shape: regression.shape ?? null,
        band: regression.band ?? null,
        // The most confident mechanism the spans match: the text's cause.
        hint: regression.hints?.[0]
          ? { title: regression.hints[0].title, confidence: regression.hints[0].confidence }
          : null,
        touched_slos: touched,
        suspect: regression.suspects?.[0] ?? null,
        cohort: regression.cohort ?? null,
      },
    },
    now,
    opts.reopened,
  );
  return alert;
}

/**
 * What the detection pass raises: raiseRegressionAlert, except for Onset's own
 * noise (the agent's probes, Onset's own database: `own`), which is shown,
 * marked as Onset's own, and never alerted (null).
 */
export async function alertRegression(
  db: Queryable,
  regression: RegressionForAlert,
  opts: { now?: number; reopened?: Reopened } = {},
): Promise<AlertRow | null> {
  if (regression.own) return null;
  return raiseRegressionAlert(db, regression, opts);
}

/**
 * A regression reopened by hand pages by the same policy as an open: a new
 * episode (its own dedup_key, so receivers open a new incident), with the
 * severity, silences and webhooks of any firing, its history starting with
 * who reopened it and why. One that never alerted (its step had not held,
 * or a burst) is left to the detector's hold, as when it opened; one whose
 * alert still fires (it was acknowledged) records the reopen on that alert.
 */
export async function reopenRegressionAlert(
  db: Queryable,
  regression: RegressionForAlert,
  reopened: Reopened,
): Promise<AlertRow | null> {
  if (!(await regressionAlerted(db, regression.id))) return null;
  return alertRegression(db, regression, { reopened });
}

/** Refresh the alert of a regression only if it is firing (e.g. its attribution changed). */
export async function refreshRegressionAlertIfFiring(
  db: Queryable,
  regression: RegressionForAlert,
  opts: { now?: number } = {},
): Promise<void> {
  if (await firingAlertId(db, regressionAlertKey(regression.id)))
    await alertRegression(db, regression, opts);
}

/** Acknowledge the firing, not yet acknowledged alert of a regression, if any. */
export async function acknowledgeRegressionAlert(
  db: Queryable,
  regressionId: string | number,
  by: string | null,
  comment: string | null,
): Promise<void> {
  const id = await firingAlertId(db, regressionAlertKey(regressionId), { unacknowledged: true });
  if (id) await acknowledgeAlert(db, id, by, comment);
}

/** Resolve the alert of a regression (e.g. latency returned, or marked fixed). */
export async function resolveRegressionAlert(
  db: Queryable,
  regressionId: string | number,
  opts: { now?: number; reason?: string; by?: string | null; comment?: string | null } = {},
): Promise<AlertRow | null> {
  return resolveAlert(
    db,
    regressionAlertKey(regressionId),
    opts.now ?? Date.now(),
    {
      reason: opts.reason ?? 'regression resolved',
      ...(opts.comment ? { comment: opts.comment } : {}),
    },
    opts.by ?? null,
  );
}

/**
 * A regression's alert and the regression are acknowledged and resolved
 * together, from either page: what the alert routes do to the regression
 * (alerts/kinds.ts), in the transaction that changed the alert.
 */
export const regressionAlertHooks: AlertKindHooks = {
  async acknowledged(c, alert, by) {
    if (!alert.regression_id) return;
    const r = await getRegression(c, alert.regression_id, true);
    if (r?.status === 'open') await markAcknowledged(c, r.id, by);
  },
  async resolvedByHand(c, alert, by, comment) {
    if (!alert.regression_id) return;
    const r = await getRegression(c, alert.regression_id, true);
    if (r && r.status !== 'resolved')
      await markResolved(c, r.id, by ?? 'user', comment ?? 'resolved from its alert');
  },
};
