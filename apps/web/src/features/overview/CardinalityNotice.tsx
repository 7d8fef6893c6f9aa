/**
 * A notice on the Overview when the cardinality guard refused series or
 * folded resources (GET /api/v1/limits): what was lost, for which services,
 * a few refused names to find the instrumentation, and what to change.
 * Nothing is drawn while no limit is reached and nothing was dropped.
 */
import type { CardinalityStatus } from '@onset/contract';
import { useCardinality } from './api.ts';
import { formatAgo } from '../../state/timeRange.ts';

const SERVICES_SHOWN = 3;

function sum(d: { service_limit: number; global_limit: number }): number {
  return d.service_limit + d.global_limit;
}

export function CardinalityNotice() {
  const { data } = useCardinality();
  if (!data) return null;
  return <CardinalityNoticeView status={data} now={Date.now()} />;
}

export function CardinalityNoticeView({ status, now }: { status: CardinalityStatus; now: number }) {
  const dropped = sum(status.dropped.series);
  const folded = sum(status.dropped.resource);
  const atLimit = status.services.filter((s) => s.at_limit.length > 0);
  const globalReached = status.series.global_reached || status.resources.global_reached;
  if (!dropped && !folded && !atLimit.length && !globalReached) return null;
  const shown = status.services.slice(0, SERVICES_SHOWN);
  const more = status.services.length - shown.length;
  return (
    <section className="cardinality-notice" role="status" aria-label="Cardinality limits">
      <strong>Cardinality limit reached.</strong>{' '}
      {dropped > 0 && (
        <>
          {dropped.toLocaleString('en-US')} spans and data points were dropped because their series
          would have been new beyond a limit
          {folded > 0 ? '; ' : '. '}
        </>
      )}
      {folded > 0 && (
        <>
          {folded.toLocaleString('en-US')} were kept under an overflow resource (their host or
          cohort was new beyond a limit).{' '}
        </>
      )}
      <span className="muted">
        Counted since the server started, {formatAgo(Date.parse(status.since), now)}.
      </span>
      {status.series.global_reached && (
        <p>
          All services together have {status.series.used.toLocaleString('en-US')} series, the global
          limit: no service gets a new series.
        </p>
      )}
      {shown.length > 0 && (
        <ul>
          {shown.map((s) => (
            <li key={s.service}>
              <code>{s.service}</code>: {s.series.toLocaleString('en-US')} series
              {s.at_limit.includes('series') ? ` (limit ${status.series.per_service})` : ''}
              {s.dropped_series > 0 ? `, ${s.dropped_series.toLocaleString('en-US')} dropped` : ''}
              {s.folded_resource > 0
                ? `, ${s.folded_resource.toLocaleString('en-US')} under the overflow resource`
                : ''}
              {s.examples.length > 0 && (
                <>
                  {' '}
                  — e.g.{' '}
                  {s.examples.map((e, i) => (
                    <span key={e}>
                      {i > 0 ? ', ' : ''}
                      <code>{e}</code>
                    </span>
                  ))}
                </>
              )}
            </li>
          ))}
          {more > 0 && <li>and {more} more services</li>}
        </ul>
      )}
      <p className="muted">
        Usually ids in span names: set <code>http.route</code> in the instrumentation, or raise{' '}
        <code>ONSET_MAX_SERIES_PER_SERVICE</code> / <code>ONSET_MAX_SERIES</code>. Details:{' '}
        <code>GET /api/v1/limits</code>.
      </p>
    </section>
  );
}
