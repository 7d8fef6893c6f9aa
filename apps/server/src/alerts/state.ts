/**
 * The alert state machine, shared by SLO burns and regressions:
 *
 *     (none) --fire--> firing --resolve--> resolved
 *
 * One row per episode; `alert_key` says what it is about (slo:<id>:<severity>,
 * regression:<id>) and at most one episode per key is firing (unique partial
 * index). Every transition writes its history event and its webhook outbox
 * rows in the same transaction, so a committed state change is never lost
 * and is delivered exactly once per webhook (at least once on the wire).
 * A firing alert matched by an active silence is recorded but not sent; it
 * is sent when the silence ends while it still fires.
 *
 * When to fire and what an alert says is policy, and lives with its feature
 * (slos/alerting.ts, regressions/alerting.ts); the SQL lives in store.ts.
 */
import type { AlertStatus } from '@onset/contract';
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';
import { enqueueDeliveries } from '../webhooks/outbox.ts';
import { snapshotOf } from './snapshot.ts';
import { alertText } from './text.ts';
import type { SilenceRow } from './silences.ts';
import {
  addEvent,
  claimNotification,
  findSilence,
  firingSilencedBy,
  insertFiring,
  markAcknowledged,
  markHeldOrSent,
  markResolved,
  markSilenced,
  refreshFiring,
  unsentFiringAlerts,
  type AlertRow,
  type FireInput,
} from './store.ts';

const enqueue = (c: Queryable, a: AlertRow, event: AlertStatus, now: number) =>
  enqueueDeliveries(c, snapshotOf(a), a.dedup_key, event, now);

/** The heading stored with an alert: its text's title (alerts/text.ts), from the same numbers. */
export function titleOf(input: Omit<FireInput, 'title'> & { title?: string }): string {
  return alertText({
    type: input.type,
    title: input.title ?? null,
    service: input.service ?? null,
    op: input.op ?? null,
    view: input.view ?? null,
    series_name: input.seriesName ?? null,
    burn_rate: input.burnRate ?? null,
    window: input.burnWindow ?? null,
    details: input.details ?? {},
  }).title;
}

/** Who reopened what an alert is about (a resolved regression), and why. */
export interface Reopened {
  by: string | null;
  comment: string | null;
}

/**
 * Start an episode for `alertKey` unless one is firing; refresh its numbers
 * (and so its text) if it is. `title` is needed only by a kind without a
 * renderer in alerts/text.ts. `reopened`: the subject was reopened by hand;
 * the episode's history says so first (a new episode is sent like any
 * other: the same silences, severities and webhooks as an open).
 */
export async function fireAlert(
  db: Queryable,
  fire: Omit<FireInput, 'title'> & { title?: string },
  now = Date.now(),
  reopened?: Reopened,
): Promise<{ alert: AlertRow; created: boolean }> {
  const input: FireInput = { ...fire, title: titleOf(fire) };
  return withTransaction(db, async (c) => {
    const inserted = await insertFiring(c, input, now);
    if (!inserted) {
      const alert = (await refreshFiring(c, input, now))!;
      if (reopened)
        await addEvent(c, alert.id, 'reopened', now, reopenDetail(reopened), reopened.by);
      return { alert, created: false };
    }
    let alert = inserted;
    if (reopened) await addEvent(c, alert.id, 'reopened', now, reopenDetail(reopened), reopened.by);
    await addEvent(c, alert.id, 'firing', now, {
      severity: alert.severity,
      burn_rate: alert.burn_rate,
      window: alert.burn_window,
    });
    const silence = await findSilence(c, alert, now);
    if (silence) {
      await markHeldOrSent(c, alert.id, now, 'silenced', { silence_id: silence }, silence);
      alert = { ...alert, silenced_by: silence };
    } else {
      const n = await enqueue(c, alert, 'firing', now);
      await markHeldOrSent(c, alert.id, now, 'notified', { webhooks: n });
      alert = { ...alert, notified: true };
    }
    return { alert, created: true };
  });
}

const reopenDetail = (r: Reopened) => (r.comment ? { comment: r.comment } : {});

/**
 * When a transition happens: the caller's `now` (a pass's start, or a time
 * a test runs as) unless the wall clock is past it. A detection pass over
 * many series commits its transitions minutes after it started; dated at
 * its start, a resolve (and its delivery) read as older than what caused it.
 */
export function happeningAt(now: number): number {
  return Math.max(now, Date.now());
}

/** End the firing episode of `alertKey`, if any; webhooks that got its firing get its resolved. */
export async function resolveAlert(
  db: Queryable,
  alertKey: string,
  now = Date.now(),
  detail: Record<string, unknown> = {},
  actor: string | null = null,
): Promise<AlertRow | null> {
  return withTransaction(db, async (c) => {
    const alert = await markResolved(c, alertKey, now);
    if (!alert) return null;
    await addEvent(c, alert.id, 'resolved', now, detail, actor);
    await enqueue(c, alert, 'resolved', now);
    return alert;
  });
}

/** Firing alerts held back by a silence that has since ended are sent now. */
export async function releaseUnsilenced(pool: Pool, now: number): Promise<number> {
  let released = 0;
  for (const a of await unsentFiringAlerts(pool)) {
    if (await findSilence(pool, a, now)) continue;
    await withTransaction(pool, async (c) => {
      if (!(await claimNotification(c, a.id))) return;
      const n = await enqueue(c, a, 'firing', now);
      await addEvent(c, a.id, 'notified', now, { webhooks: n, reason: 'silence ended' });
      released++;
    });
  }
  return released;
}

export async function acknowledgeAlert(
  db: Queryable,
  id: string,
  by: string | null,
  comment: string | null,
  now = Date.now(),
): Promise<AlertRow | null> {
  if (!/^\d{1,18}$/.test(id)) return null;
  return withTransaction(db, async (c) => {
    const alert = await markAcknowledged(c, id, by, comment, now);
    if (!alert) return null;
    await addEvent(c, id, 'acknowledged', now, comment ? { comment } : {}, by);
    return alert;
  });
}

/**
 * A silence created while alerts it matches are firing: they are marked
 * silenced (who and why in their history). Anything they would still send
 * is held: a new episode of the same key is not sent while the silence lasts.
 */
export type SilenceRecord = Omit<SilenceRow, 'created_at'>;

export async function silenceFiringAlerts(
  db: Queryable,
  silence: SilenceRecord,
  now = Date.now(),
): Promise<string[]> {
  if (silence.starts_at.getTime() > now) return [];
  return withTransaction(db, async (c) => {
    const ids = await markSilenced(c, silence);
    for (const id of ids)
      await addEvent(
        c,
        id,
        'silenced',
        now,
        {
          silence_id: silence.id,
          comment: silence.comment,
          ends_at: silence.ends_at.toISOString(),
        },
        silence.created_by,
      );
    return ids;
  });
}

/** A silence ended early: the firing alerts it covered say so in their history. */
export async function recordSilenceEnded(
  db: Queryable,
  silenceId: string,
  now = Date.now(),
): Promise<void> {
  for (const id of await firingSilencedBy(db, silenceId))
    await addEvent(db, id, 'silence_ended', now, { silence_id: silenceId });
}
