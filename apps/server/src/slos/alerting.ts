/**
 * SLO alerting policy: one alert per SLO and severity (page, ticket), fired
 * while a burn-rate tier of that severity fires and resolved once it has
 * stayed quiet for the short window of the tier that fired last (core's
 * sloAlertResolves: a burn that comes back within it is the same alert), or
 * at once when the SLO is deleted. The transitions themselves are
 * alerts/state.ts; the rule is documented in docs/slos.md ("Alert hysteresis").
 */
import { sloAlertResolves, type TierResult } from '@onset/core';
import { sloAlertKey, type Severity } from '@onset/contract';
import type { Pool, Queryable } from '../db/pool.ts';
import { fireAlert, resolveAlert, titleOf } from '../alerts/state.ts';
import { firingAlerts, refreshFiringMany, type AlertRow } from '../alerts/store.ts';

/** Alert transitions run concurrently up to this many (a mass incident fires hundreds at once). */
const TRANSITION_CONCURRENCY = 6;

function round(x: number | null): number | null {
  return x === null ? null : Number(x.toPrecision(4));
}

/** Whether a firing SLO alert whose tiers stopped firing has been quiet long enough to resolve. */
function quietLongEnough(a: AlertRow, now: number): boolean {
  const last = Date.parse(String(a.details.last_burning_at ?? ''));
  return sloAlertResolves({
    lastBurningMs: Number.isNaN(last) ? a.updated_at.getTime() : last,
    shortWindow: typeof a.details.short_window === 'string' ? a.details.short_window : null,
    now,
  });
}

/** The most severe firing SLO-burn alert per SLO. */
export async function firingSloAlerts(
  db: Queryable,
  sloIds?: string[],
): Promise<Map<string, AlertRow>> {
  const out = new Map<string, AlertRow>();
  for (const a of await firingAlerts(db, 'slo_burn', sloIds)) {
    const cur = out.get(a.slo_id!);
    if (!cur || (a.severity === 'page' && cur.severity !== 'page')) out.set(a.slo_id!, a);
  }
  return out;
}

/** Bring SLO-burn alerts in line with an evaluation: fire what burns, resolve what stopped. */
export async function reconcileSloAlerts(
  pool: Pool,
  evals: Array<{
    slo: {
      id: string;
      name: string;
      service: string;
      op: string | null;
      view: string | null;
      threshold_us: number;
      objective: number;
      window_text: string;
    };
    firing: Map<Severity, TierResult>;
  }>,
  now: number,
): Promise<{
  fired: Array<{ alert_id: string; slo_id: string | null; severity: string }>;
  resolved: Array<{ alert_id: string; slo_id: string | null; severity: string }>;
}> {
  const open = await firingAlerts(pool, 'slo_burn');
  const openByKey = new Map(open.map((a) => [a.alert_key, a]));
  const fired: Array<{ alert_id: string; slo_id: string | null; severity: string }> = [];
  const resolved: typeof fired = [];
  const refresh = {
    keys: [] as string[],
    rate: [] as Array<number | null>,
    window: [] as string[],
    details: [] as string[],
    titles: [] as string[],
  };
  const seen = new Set<string>();
  const actions: Array<() => Promise<void>> = [];
  for (const { slo, firing } of evals) {
    for (const severity of ['page', 'ticket'] as const) {
      const key = sloAlertKey(slo.id, severity);
      seen.add(key);
      const tier = firing.get(severity);
      const have = openByKey.get(key);
      if (tier) {
        const details = {
          slo_name: slo.name,
          threshold_ms: slo.threshold_us / 1000,
          objective: slo.objective,
          slo_window: slo.window_text,
          tier: tier.name,
          factor: tier.factor,
          long_window: tier.long,
          short_window: tier.short,
          burn_long: round(tier.burn_long),
          burn_short: round(tier.burn_short),
          events_long: tier.events_long,
          events_short: tier.events_short,
          // When a tier of this severity last fired: the quiet time before resolving counts from here.
          last_burning_at: new Date(now).toISOString(),
        };
        if (!have) {
          actions.push(async () => {
            const { alert } = await fireAlert(
              pool,
              {
                type: 'slo_burn',
                alertKey: key,
                severity,
                service: slo.service,
                op: slo.op,
                view: slo.view,
                sloId: slo.id,
                burnRate: round(tier.burn_long),
                burnWindow: tier.long,
                details,
              },
              now,
            );
            fired.push({ alert_id: alert.id, slo_id: slo.id, severity });
          });
        } else {
          refresh.keys.push(key);
          refresh.rate.push(round(tier.burn_long));
          refresh.window.push(tier.long);
          refresh.details.push(JSON.stringify(details));
          refresh.titles.push(
            titleOf({
              type: 'slo_burn',
              alertKey: key,
              severity,
              service: slo.service,
              burnRate: round(tier.burn_long),
              burnWindow: tier.long,
              details,
            }),
          );
        }
      } else if (have) {
        if (!quietLongEnough(have, now)) continue; // hysteresis: still the same burn
        actions.push(async () => {
          const a = await resolveAlert(pool, key, now, {
            reason: 'burn rate back under the threshold',
          });
          if (a) resolved.push({ alert_id: a.id, slo_id: slo.id, severity });
        });
      }
    }
  }
  // SLOs that no longer exist stop burning.
  for (const a of open) {
    if (seen.has(a.alert_key)) continue;
    actions.push(async () => {
      const r = await resolveAlert(pool, a.alert_key, now, { reason: 'SLO deleted' });
      if (r) resolved.push({ alert_id: r.id, slo_id: r.slo_id, severity: r.severity });
    });
  }
  // Each transition is its own transaction on its own alert key: a few at a time.
  let next = 0;
  const worker = async () => {
    while (next < actions.length) await actions[next++]!();
  };
  await Promise.all(
    Array.from({ length: Math.min(TRANSITION_CONCURRENCY, actions.length) }, worker),
  );
  await refreshFiringMany(pool, refresh, now);
  return { fired, resolved };
}
