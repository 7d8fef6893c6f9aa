/** Small SLO widgets shared by the Overview and the SLO pages. */
import { formatPercent } from '../../lib/format.ts';

export { sortSlosByBudget } from '../../components/graphs/errorBudget.ts';

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

export function formatBurn(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return v >= 100 ? `${v.toFixed(0)}×` : v >= 10 ? `${v.toFixed(1)}×` : `${v.toFixed(2)}×`;
}

/** A burn rate, red when it is over the alert factor of its window. */
export function BurnCell({ value, threshold }: { value: number | null; threshold?: number }) {
  const over = value !== null && threshold !== undefined && value >= threshold;
  return (
    <span
      className={`burn ${over ? 'burn-over' : value !== null && value > 1 ? 'burn-warn' : ''}`}
      title={threshold ? `alerts at ${threshold}×` : undefined}
    >
      {formatBurn(value)}
    </span>
  );
}
