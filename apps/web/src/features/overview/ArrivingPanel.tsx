/**
 * What is arriving in the range: per service its series, hosts, calls and the
 * latest minute's p50/p99; per host its services. A newcomer sees here that
 * the agent's or an SDK's data lands before anything ever regresses.
 */
import { Link } from 'react-router-dom';
import type { Arriving } from '@onset/contract';
import { useArriving } from './api.ts';
import { formatCount, formatLatencyMs } from '../../lib/format.ts';
import { formatInstant } from '../../lib/time.ts';
import { linkWithGlobals } from '../../state/url.ts';
import type { RangeText } from '../../state/timeRange.ts';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';

export function ArrivingPanel({
  range,
  params,
  rangeLabel,
}: {
  range: RangeText;
  params: URLSearchParams;
  rangeLabel: string;
}) {
  const q = useArriving(range);
  return (
    <Panel title={`What is arriving (${rangeLabel.toLowerCase()})`} id="arriving-head">
      {q.data ? (
        q.data.services.length ? (
          <ArrivingTables data={q.data} params={params} />
        ) : (
          <Empty title="Nothing arrived in this range">
            Send OpenTelemetry traces to <code>POST /v1/traces</code> (port 4318 or this port), or
            start the local agent (<code>npm start</code> does). Widen the range to see older data.
          </Empty>
        )
      ) : q.error ? (
        <ErrorState error={q.error} what="what is arriving" onRetry={() => q.refetch()} />
      ) : (
        <Loading label="Loading what is arriving…" height={120} />
      )}
    </Panel>
  );
}

function ArrivingTables({ data, params }: { data: Arriving; params: URLSearchParams }) {
  const t = data.totals;
  return (
    <>
      <p className="arriving-totals" data-testid="arriving-totals">
        <b>{t.services}</b> {t.services === 1 ? 'service' : 'services'}, <b>{t.hosts}</b>{' '}
        {t.hosts === 1 ? 'host' : 'hosts'}, <b>{t.series}</b> latency series with calls in the
        range.
      </p>
      <div className="table-scroll">
        <table className="table arriving-table">
          <caption className="sr-only">Services sending data, busiest first</caption>
          <thead>
            <tr>
              <th scope="col">Service</th>
              <th scope="col" className="num">
                Series
              </th>
              <th scope="col">Hosts</th>
              <th scope="col" className="num">
                Calls
              </th>
              <th scope="col" className="num">
                Last minute p50
              </th>
              <th scope="col" className="num">
                p99
              </th>
            </tr>
          </thead>
          <tbody>
            {data.services.map((s) => (
              <tr key={s.service} data-service={s.service}>
                <td>
                  <Link to={linkWithGlobals('/explorer', params, { find: s.service })}>
                    {s.service}
                  </Link>
                </td>
                <td className="num">{s.series}</td>
                <td className="small">
                  {s.hosts.length <= 3 ? s.hosts.join(', ') || '–' : `${s.hosts.length} hosts`}
                </td>
                <td className="num">{formatCount(s.calls)}</td>
                <td className="num">
                  {s.last_minute ? formatLatencyMs(s.last_minute.p50_ms) : '–'}
                </td>
                <td className="num">
                  {s.last_minute ? (
                    <span title={`minute of ${formatInstant(Date.parse(s.last_minute.at))}`}>
                      {formatLatencyMs(s.last_minute.p99_ms)}
                    </span>
                  ) : (
                    '–'
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {data.hosts.length ? (
        <p className="muted small arriving-hosts">
          Hosts:{' '}
          {data.hosts.map((h, i) => (
            <span key={h.host}>
              {i ? ', ' : ''}
              <Link to={linkWithGlobals('/explorer', params, { find: h.host })}>{h.host}</Link> (
              {h.services.length} {h.services.length === 1 ? 'service' : 'services'}, last seen{' '}
              {formatInstant(Date.parse(h.last_seen))})
            </span>
          ))}
        </p>
      ) : null}
    </>
  );
}
