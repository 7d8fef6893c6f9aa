/**
 * The shape the server gave a regression (api.md "Regressions": `shape`,
 * `drift_per_hour`): nothing for a step, "transient" for a burst that was
 * over within minutes (closed, never paged), "drift ×1.3/h" for a sustained
 * ramp. Drawn as the server computed it; nothing is judged here.
 */
import type { Regression } from '@onset/contract';

export function ShapeTag({ r }: { r: Pick<Regression, 'shape' | 'drift_per_hour'> }) {
  if (r.shape === 'transient')
    return (
      <span
        className="status-pill shape-transient"
        data-testid="regression-shape"
        title="A burst that was over within minutes: closed without paging"
      >
        transient
      </span>
    );
  if (r.shape === 'drift') {
    const rate = r.drift_per_hour;
    return (
      <span
        className="status-pill shape-drift"
        data-testid="regression-shape"
        title="A sustained ramp, reported once with its rate (growth per hour of the quantile that moved)"
      >
        drift{rate ? ` ×${rate.toPrecision(3)}/h` : ''}
      </span>
    );
  }
  return null;
}
