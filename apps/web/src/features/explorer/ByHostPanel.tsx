/** "Group by host": one row per host of the shown series, slowest first, to spot the outlier. */
import type { SeriesHosts } from '@onset/contract';
import { useSeriesHosts } from './api.ts';
import { formatLatencyMs } from '../../lib/format.ts';
import type { RangeText } from '../../state/timeRange.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';
import { Sparkline } from '../../components/Sparkline.tsx';

/** A host whose p99 now is over twice the median of the others stands out. */
function outliers(hosts: SeriesHosts['hosts']): Set<string> {
  const p99 = hosts.map((h) => h.current.p99_ms).filter((v): v is number => v !== null);
  if (p99.length < 3) return new Set();
  const sorted = [...p99].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return new Set(hosts.filter((h) => (h.current.p99_ms ?? 0) > 2 * median).map((h) => h.host));
}

export function ByHostPanel({
  seriesId,
  range,
  onPick,
}: {
  seriesId: string;
  range: RangeText;
  onPick: (host: string) => void;
}) {
  const q = useSeriesHosts(seriesId, range);
  const hosts = q.data?.hosts ?? [];
  const out = outliers(hosts);
  return (
    <Panel title={`By host${q.data ? ` (${hosts.length})` : ''}, slowest p99 first`}>
      {!q.data ? (
        q.error ? (
          <ErrorState error={q.error} what="the per-host view" onRetry={() => q.refetch()} />
        ) : (
          <Loading label="Loading hosts…" height={80} />
        )
      ) : hosts.length === 0 ? (
        <p className="muted">No host reported this series in the range.</p>
      ) : (
        <div className="table-scroll">
          <table className="table series-table by-host-table">
            <thead>
              <tr>
                <th scope="col">Host</th>
                <th scope="col" className="num">
                  p50 now
                </th>
                <th scope="col" className="num">
                  p99 now
                </th>
                <th scope="col">p99 over the range</th>
              </tr>
            </thead>
            <tbody>
              {hosts.map((h) => (
                <tr key={h.host} data-host={h.host}>
                  <td>
                    {h.host ? (
                      <button type="button" className="btn link" onClick={() => onPick(h.host)}>
                        {h.host}
                      </button>
                    ) : (
                      <span className="muted">(no host.name)</span>
                    )}
                    {out.has(h.host) ? (
                      <span className="badge badge-regressed">outlier</span>
                    ) : null}
                  </td>
                  <td className="num">
                    {h.current.p50_ms === null ? '–' : formatLatencyMs(h.current.p50_ms)}
                  </td>
                  <td className="num">
                    {h.current.p99_ms === null ? '–' : formatLatencyMs(h.current.p99_ms)}
                  </td>
                  <td>
                    <Sparkline
                      values={h.spark.p99_ms}
                      label={`p99 on ${h.host || 'no host'} over the range`}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Panel>
  );
}
