/**
 * The series one regression (one incident) was found on, as the server
 * grouped them: each view or route with its own before → after, onset,
 * confidence and hosts, the headline first, each linked to its series.
 */
import { memo } from 'react';
import { Link } from 'react-router-dom';
import type { RegressionMember } from '@onset/contract';
import { hostsText } from '../../components/graphs/markerData.ts';
import { edgeLabel, formatChange, formatPercent } from '../../lib/format.ts';
import { formatInstant } from '../../state/timeRange.ts';
import { linkWithGlobals, useUrlState } from '../../state/url.ts';

export const MemberList = memo(function MemberList({
  members,
}: {
  members: readonly RegressionMember[];
}) {
  const { params } = useUrlState();
  return (
    <table className="table member-table" data-testid="members">
      <thead>
        <tr>
          <th scope="col">Series</th>
          <th scope="col">p50</th>
          <th scope="col">p99</th>
          <th scope="col">Onset</th>
          <th scope="col">Confidence</th>
          <th scope="col">Hosts</th>
        </tr>
      </thead>
      <tbody>
        {members.map((m) => (
          <tr
            key={`${m.series_id}-${m.onset}`}
            data-series-id={m.series_id}
            data-view={m.view}
            className={m.headline ? 'highlight' : ''}
          >
            <td>
              <Link
                to={linkWithGlobals('/explorer', params, { series: m.series_id })}
                className="mono"
              >
                {m.name}
              </Link>{' '}
              <span className="muted small">
                {edgeLabel(m)} · {m.op} · {m.view}
              </span>
              {m.headline ? <span className="tag">headline</span> : null}
              {m.recovered_at ? <span className="tag">back to before</span> : null}
            </td>
            <td>{formatChange(m.before.p50_ms, m.after.p50_ms, m.ratio_p50)}</td>
            <td>{formatChange(m.before.p99_ms, m.after.p99_ms, m.ratio_p99)}</td>
            <td>{formatInstant(Date.parse(m.onset))}</td>
            <td>{formatPercent(m.confidence)}</td>
            <td className="small" title={m.hosts.join(', ')}>
              {m.hosts.length ? hostsText(m.hosts) : '–'}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
});
