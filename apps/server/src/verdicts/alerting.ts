/**
 * Deploy verdict alerting policy: a verdict that fails raises one alert per
 * marker, ever (type deploy_verdict, key verdict:<deploy id>, severity ticket: a
 * gate already stopped or should stop the rollout; nobody is woken for it), sent
 * to every webhook like SLO burns and regressions. Its title, which Slack and
 * PagerDuty show as the message, says which series and by how much. It resolves
 * when the verdict no longer fails (the regression that failed it was resolved,
 * the marker was deleted) or by hand. The transitions are alerts/state.ts.
 */
import type { Queryable } from '../db/pool.ts';
import { verdictAlertKey, type Verdict } from '@onset/contract';
import { fireAlert, resolveAlert } from '../alerts/state.ts';
import { alertEverRaised, firingAlerts } from '../alerts/store.ts';
import type { MarkerRow } from '../deploys/queries.ts';

const x = (r: number | null) => (r === null ? '?' : `×${Number(r.toPrecision(3))}`);

/** "checkout GET /cart (server) p50 ×1.31, p99 ×1.28; and 2 more series". */
export function failedSeriesText(v: Verdict): string {
  const failed = v.series.filter((s) => s.verdict === 'fail');
  if (!failed.length) return v.reason;
  const one = (s: Verdict['series'][number]) =>
    `${s.service} ${s.name}${s.peer ? ` → ${s.peer}` : ''} (${s.view}) p50 ${x(s.p50_ratio.value)}, p99 ${x(s.p99_ratio.value)}`;
  const more = failed.length - 2;
  return `${failed.slice(0, 2).map(one).join('; ')}${more > 0 ? `; and ${more} more series` : ''}`;
}

function whatDeployed(m: MarkerRow): string {
  const versions = m.to_version ? ` ${m.from_version ?? '?'} → ${m.to_version}` : '';
  const what =
    m.component && m.component !== m.kind
      ? `${m.kind} ${m.component}${versions}`
      : `${m.kind}${versions}`;
  const where = m.service ?? (m.hosts.length ? m.hosts.slice(0, 3).join(', ') : 'fleet');
  return `${where} ${what}`.trim();
}

/** Raise the alert of a failed verdict, once per marker; true when one was raised now. */
export async function raiseVerdictAlert(
  db: Queryable,
  m: MarkerRow,
  v: Verdict,
  now = Date.now(),
): Promise<boolean> {
  // Posted markers only (CI's deploys); inferred ones repeat them and regressions alert on those.
  if (v.verdict !== 'fail' || m.source !== 'api') return false;
  const key = verdictAlertKey(m.id);
  if (await alertEverRaised(db, key)) return false;
  const failed = v.series.filter((s) => s.verdict === 'fail');
  const top = failed[0];
  const how =
    v.method === 'canary'
      ? ` on the canary hosts (${v.canary_hosts.slice(0, 4).join(', ')})`
      : ' after the deploy';
  const title = `Deploy verdict: fail — ${whatDeployed(m)} (deploy ${m.id}): ${
    failed.length ? `${failedSeriesText(v)}${how}` : v.reason
  }`.slice(0, 1000);
  const { created } = await fireAlert(
    db,
    {
      type: 'deploy_verdict',
      alertKey: key,
      severity: 'ticket',
      title,
      service: top?.service ?? m.service,
      op: top?.op ?? null,
      view: top?.view ?? null,
      seriesName: top?.name ?? null,
      details: {
        deploy_id: m.id,
        deployed: whatDeployed(m),
        deploy_kind: m.kind,
        deploy_service: m.service,
        method: v.method,
        decided_at: v.decided_at,
        reason: v.reason,
        canary_hosts: v.canary_hosts,
        regressions: v.regressions,
        failed_series: failed.slice(0, 10).map((s) => ({
          series_id: s.series_id,
          service: s.service,
          op: s.op,
          view: s.view,
          name: s.name,
          peer: s.peer,
          p50_ratio: s.p50_ratio.value,
          p99_ratio: s.p99_ratio.value,
          reason: s.reason,
        })),
      },
    },
    now,
  );
  return created;
}

/** Resolve firing verdict alerts whose marker is gone or whose verdict no longer fails. */
export async function resolveStaleVerdictAlerts(
  db: Queryable,
  verdictOf: (deployId: string) => Promise<Verdict | null>,
  now = Date.now(),
): Promise<number> {
  let resolved = 0;
  for (const a of await firingAlerts(db, 'deploy_verdict')) {
    const id = String(a.details.deploy_id ?? '');
    const v = id ? await verdictOf(id) : null;
    if (v?.verdict === 'fail') continue;
    await resolveAlert(db, a.alert_key, now, {
      reason: v ? `the verdict is now ${v.verdict}` : 'the deploy marker was deleted',
    });
    resolved++;
  }
  return resolved;
}
