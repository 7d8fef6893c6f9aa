/** Small SLO widgets shared by the Overview and the SLO pages. */
import { PagingBadge } from './Delivery.tsx';
import type { ReactNode } from 'react';
import { Link } from 'react-router-dom';
import type { Slo } from '@onset/contract';
import { formatBurn } from '@onset/core';
import { formatPercent } from '../lib/format.ts';
import { linkWithGlobals } from '../state/url.ts';

import { tierFactor } from '../lib/slos.ts';

export { sortSlosByBudget } from '../lib/slos.ts';

/** Error budget left as a bar: green while healthy, amber under 50%, red when spent. */
export function BudgetBar({ value }: { value: number | null }) {
  if (value === null || !Number.isFinite(value)) return <span className="muted">–</span>;
  const clamped = Math.max(0, Math.min(1, value));
  const level = value <= 0 ? 'spent' : value < 0.5 ? 'low' : 'ok';
  return (
    <span
      className={`budget budget-${level}`}
      title={`${formatPercent(value)} of the error budget left`}
    >
      <span className="budget-track" aria-hidden="true">
        <span className="budget-fill" style={{ width: `${clamped * 100}%` }} />
      </span>
      <span className="budget-text">
        {formatPercent(value, value < 0.1 && value > -0.1 ? 1 : 0)}
      </span>
    </span>
  );
}

/** A burn rate (the rule lives in core: webhook text writes it the same way). */
export { formatBurn };

/** An alert factor as the server states it (13.44×, 5.6×, 1×): exact, never rounded to look like another. */
export function formatFactor(v: number): string {
  return `${Number(v.toFixed(2))}×`;
}

/** A burn rate, red when it is over the alert factor of its window. */
export function BurnCell({ value, threshold }: { value: number | null; threshold?: number }) {
  const over = value !== null && threshold !== undefined && value >= threshold;
  return (
    <span
      className={`burn ${over ? 'burn-over' : value !== null && value > 1 ? 'burn-warn' : ''}`}
      title={threshold ? `alerts at ${formatFactor(threshold)}` : undefined}
    >
      {formatBurn(value)}
    </span>
  );
}

/** The long windows of the alert tiers, which SLO tables show burn rates for. */
export type AlertWindow = '1h' | '6h' | '1d' | '3d';

/** An SLO's burn rate over one alert window, red from the factor the server alerts at for this SLO. */
export function SloBurn({ slo, window }: { slo: Slo; window: AlertWindow }) {
  return (
    <BurnCell
      value={slo.status?.burn_rates?.[window] ?? null}
      threshold={tierFactor(slo, window)}
    />
  );
}

/** An SLO's firing alert as a severity pill (with "· acked" if asked), else `none`. */
export function SloAlertPill({
  slo,
  showAcknowledged = false,
  none = null,
}: {
  slo: Slo;
  showAcknowledged?: boolean;
  none?: ReactNode;
}) {
  const alert = slo.status?.alert;
  if (!alert) return <>{none}</>;
  return (
    <span className={`alert-pill sev-${alert.severity}`}>
      {alert.severity}
      {showAcknowledged && alert.acknowledged ? ' · acked' : ''}
    </span>
  );
}

/** The first cell of an SLO table row: the name, linked to the SLO's page, over a muted detail line. */
export function SloNameCell({
  slo,
  params,
  children,
}: {
  slo: Slo;
  params: URLSearchParams;
  children: ReactNode;
}) {
  return (
    <td>
      <Link to={linkWithGlobals(`/slos/${slo.id}`, params)}>{slo.name}</Link>
      <div className="muted small">{children}</div>
    </td>
  );
}

/** The status cells that end an SLO table row: budget left, burn rate per alert window, alert. */
export function SloStatusCells({
  slo,
  windows,
  showAcknowledged = false,
}: {
  slo: Slo;
  windows: readonly AlertWindow[];
  showAcknowledged?: boolean;
}) {
  return (
    <>
      <td>
        <BudgetBar value={slo.status?.budget_remaining ?? null} />
      </td>
      {windows.map((w) => (
        <td key={w}>
          <SloBurn slo={slo} window={w} />
        </td>
      ))}
      <td>
        <SloAlertPill
          slo={slo}
          showAcknowledged={showAcknowledged}
          none={<span className="muted">–</span>}
        />
        {slo.status?.alert ? (
          <div className="small">
            <PagingBadge alert={slo.status.alert} />
          </div>
        ) : null}
      </td>
    </>
  );
}
