/** An alert as the API shows it: its snapshot's body, its state, notifications and silence. */
import type { AlertNotification } from '@onset/contract';
import type { Queryable } from '../db/pool.ts';
import { lastReopens, type AlertRow } from './store.ts';
import { notificationsFor, pagingOf } from './notifications.ts';
import { alertBody, snapshotOf } from './snapshot.ts';
import { silenceRef, silencesByIds, type SilenceRow } from './silences.ts';

export function alertJson(
  a: AlertRow,
  baseUrl: string,
  notifications: AlertNotification[] = [],
  silence: SilenceRow | null = null,
  reopened: { at: Date; by: string | null; comment: string | null } | null = null,
) {
  const { details, ...fields } = alertBody(snapshotOf(a), baseUrl);
  return {
    ...fields,
    type: a.type, // a stored alert is never a test
    status: a.status,
    dedup_key: a.dedup_key,
    notified: a.notified,
    silenced_by: a.silenced_by,
    silence: silence ? silenceRef(silence) : null,
    acknowledged: a.acknowledged_at
      ? { at: a.acknowledged_at.toISOString(), by: a.acknowledged_by, comment: a.ack_comment }
      : null,
    reopened: reopened
      ? { at: reopened.at.toISOString(), by: reopened.by, comment: reopened.comment }
      : null,
    notifications,
    paging: pagingOf(a, notifications),
    details,
  };
}

/** Alerts as the API shows them, each with its notifications, silence and reopen (one query each for all). */
export async function alertsJson(db: Queryable, rows: AlertRow[], baseUrl: string) {
  const [notes, silences, reopens] = await Promise.all([
    notificationsFor(
      db,
      rows.map((a) => a.id),
    ),
    silencesByIds(
      db,
      rows.map((a) => a.silenced_by),
    ),
    lastReopens(
      db,
      rows.map((a) => a.id),
    ),
  ]);
  return rows.map((a) =>
    alertJson(
      a,
      baseUrl,
      notes.get(a.id) ?? [],
      a.silenced_by ? (silences.get(a.silenced_by) ?? null) : null,
      reopens.get(a.id) ?? null,
    ),
  );
}
