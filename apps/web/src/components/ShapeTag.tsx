/**
 * The shape the server gave a regression (api.md "Regressions": `shape`,
 * `drift_per_hour`): nothing for a step, "transient" for a burst that was
 * over within minutes (closed, never paged), "drift ×1.3/h" for a sustained
 * ramp, "floor 47–52 ms" for a p99 that settled onto a steady band (`band`).
 * Drawn as the server computed it; nothing is judged here.
 */
import type { Regression } from '@onset/contract';

const ms = (x: number) => Number(x.toPrecision(3)).toString();

export function ShapeTag({ r }: { r: Pick<Regression, 'shape' | 'drift_per_hour' | 'band'> }) {
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
  if (r.shape === 'floor') {
    const b = r.band;
    return (
      <span
        className="status-pill shape-floor"
        data-testid="regression-shape"
        title={
          b
            ? `The p99 left a noisy ${ms(b.before_ms[0])}–${ms(b.before_ms[1])} ms for a steady ${ms(b.after_ms[0])}–${ms(b.after_ms[1])} ms: the slowest calls now wait a fixed time (e.g. a delayed ACK)`
            : 'The p99 settled onto a steady, higher band: the slowest calls now wait a fixed time'
        }
      >
        floor{b ? ` ${ms(b.after_ms[0])}–${ms(b.after_ms[1])} ms` : ''}
      </span>
    );
  }
  return null;
}
