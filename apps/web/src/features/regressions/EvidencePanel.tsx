/**
 * A regression's evidence as the server computed it (api.md "Evidence"):
 * hints naming a known mechanism, the attribute values over-represented
 * among slow calls (ranked, with bars), and exemplar spans with trace links.
 * Nothing here is computed in the browser beyond formatting.
 */
import type { AttributeLift, Evidence, Hint, Span } from '@onset/contract';
import { safeHttpUrl } from '../../lib/format.ts';
import { TraceLink } from '../../components/TraceLink.tsx';
import { HintItem, ShareBar, sharePct } from '../../components/Evidence.tsx';
import { formatInstant } from '../../lib/time.ts';

const pct = sharePct;
const ms = (x: number) =>
  x >= 100 ? `${x.toFixed(0)} ms` : x >= 1 ? `${x.toFixed(1)} ms` : `${(x * 1000).toFixed(0)} µs`;

export function HintList({ hints }: { hints: Hint[] }) {
  if (!hints.length)
    return (
      <p className="muted" data-testid="no-hints">
        No known mechanism matches the numbers (hints need 20+ raw calls on each side of the onset).
      </p>
    );
  return (
    <ul className="hint-list" data-testid="hints">
      {hints.map((h) => (
        <HintItem key={h.id} hint={h} />
      ))}
    </ul>
  );
}

export function AttributeTable({ lifts }: { lifts: AttributeLift[] }) {
  if (!lifts.length)
    return (
      <p className="muted">No attribute value stands out among the slow calls after the onset.</p>
    );
  return (
    <table className="table attribute-lifts" data-testid="attribute-lifts">
      <thead>
        <tr>
          <th>attribute</th>
          <th>value</th>
          <th>share of slow calls before → after</th>
          <th className="num">lift</th>
          <th className="num">slow calls after</th>
        </tr>
      </thead>
      <tbody>
        {lifts.map((l) => (
          <tr key={`${l.key}=${l.value}`}>
            <td className="mono">{l.key}</td>
            <td className="mono">{l.value}</td>
            <td>
              <div>
                <ShareBar share={l.share_before} tone="before" bad={false} />{' '}
                <span className="small muted">{pct(l.share_before)} before</span>
              </div>
              <div>
                <ShareBar share={l.share_after} tone="after" bad />{' '}
                <span className="small">{pct(l.share_after)} after</span>
              </div>
            </td>
            <td className="num">+{pct(l.lift)}</td>
            <td className="num">{l.count_after}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function SpanRow({ s }: { s: Span }) {
  const url = safeHttpUrl(s.trace_url);
  return (
    <tr>
      <td>{s.role}</td>
      <td className="num">{ms(s.duration_ms)}</td>
      <td>
        {s.paired ? `${ms(s.paired.duration_ms)} on ${s.paired.service} (${s.paired.host})` : ''}
      </td>
      <td>{s.host}</td>
      <td className="small">{formatInstant(Date.parse(s.start), true)}</td>
      <td className="mono small">
        <TraceLink traceId={s.trace_id} traceUrl={url ?? undefined} />
      </td>
    </tr>
  );
}

export function ExemplarTable({ exemplars }: { exemplars: Evidence['exemplars'] }) {
  // A cohort regression's exemplars are its slow hosts' calls, the fast hosts' after the onset apart.
  const c = exemplars.cohort;
  const sides = [
    [
      'before',
      exemplars.before,
      c ? `before the onset, slow hosts (${c.slow_hosts.join(', ')})` : '',
    ],
    ['after', exemplars.after, c ? `after the onset, slow hosts (${c.slow_hosts.join(', ')})` : ''],
    ...(c
      ? ([
          ['fast_after', c.fast_after, `after the onset, fast hosts (${c.fast_hosts.join(', ')})`],
        ] as const)
      : []),
  ] as const;
  if (!exemplars.before.length && !exemplars.after.length)
    return (
      <p className="muted">
        No raw spans kept around the onset (raw spans are kept 48 h by default).
      </p>
    );
  return (
    <table className="table exemplars" data-testid="exemplars">
      <thead>
        <tr>
          <th>call</th>
          <th className="num">duration</th>
          <th>paired span</th>
          <th>host</th>
          <th>start</th>
          <th>trace</th>
        </tr>
      </thead>
      {sides.map(([side, spans, heading]) => (
        <tbody key={side} data-side={side}>
          <tr>
            <th colSpan={6}>{heading || `${side} the onset`}</th>
          </tr>
          {spans.map((s) => (
            <SpanRow key={s.span_id} s={s} />
          ))}
        </tbody>
      ))}
    </table>
  );
}
