/**
 * What acknowledging or resolving an alert by hand does to the thing the
 * alert is about. The feature that owns that thing (regressions/ for a
 * `regression` alert) gives the hook and app.ts hands it to the alert routes,
 * so alerts/ never imports the feature and never writes its tables. Each hook
 * runs inside the transaction that changed the alert: both commit together.
 */
import type { AlertType } from '@onset/contract';
import type { Queryable } from '../db/pool.ts';
import type { AlertRow } from './store.ts';

export interface AlertKindHooks {
  /** A firing alert of this kind was acknowledged (`alert` as it is after). */
  acknowledged?: (c: Queryable, alert: AlertRow, by: string | null) => Promise<void>;
  /** A firing alert of this kind was resolved by hand (`alert` as it was before). */
  resolvedByHand?: (
    c: Queryable,
    alert: AlertRow,
    by: string | null,
    comment: string | null,
  ) => Promise<void>;
}

/** The hooks of every kind that has any; a kind without hooks changes only its alert. */
export type AlertKinds = Partial<Record<AlertType, AlertKindHooks>>;
