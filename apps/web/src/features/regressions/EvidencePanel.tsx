/**
 * A regression's evidence as the server computed it (api.md "Evidence"):
 * hints naming a known mechanism, the attribute values over-represented
 * among slow calls (ranked, with bars), and exemplar spans with trace links.
 * Nothing here is computed in the browser beyond formatting.
 */
import type { AttributeLift, Evidence, Hint, Span } from '@onset/contract';
import { safeHttpUrl } from '../../lib/format.ts';
import { formatInstant } from '../../lib/time.ts';

const pct = (x: number) => `${Math.round(x * 100)}%`;
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
        <li key={h.id} data-hint={h.id}>
          <strong>{h.title}</strong>{' '}
          <span className="muted small">
            {h.id} · confidence {pct(h.confidence)}
          </span>
          <p className="small">{h.detail}</p>
        </li>
      ))}
    </ul>
  );
}

function Bar({ share, tone }: { share: number; tone: 'before' | 'after' }) {
  return (
    <span
      className={`share-bar share-${tone}`}
      style={{
        display: 'inline-block',
        width: `${Math.max(1, share * 120)}px`,
        height: 8,
        background: tone === 'after' ? 'var(--bad, #d9534f)' : 'var(--muted, #999)',
      }}
      aria-hidden="true"
    />
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
                <Bar share={l.share_before} tone="before" />{' '}
                <span className="small muted">{pct(l.share_before)} before</span>
              </div>
              <div>
                <Bar share={l.share_after} tone="after" />{' '}
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
        {url ? (
          <a href={url} target="_blank" rel="noreferrer">
            {s.trace_id.slice(0, 16)}…
          </a>
        ) : (
          <span title="set ONSET_TRACE_URL_TEMPLATE to link a trace viewer">{s.trace_id}</span>
        )}
      </td>
    </tr>
  );
}

export function ExemplarTable({ exemplars }: { exemplars: Evidence['exemplars'] }) {
  const sides = [
    ['before', exemplars.before],
    ['after', exemplars.after],
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
      {sides.map(([side, spans]) => (
        <tbody key={side} data-side={side}>
          <tr>
            <th colSpan={6}>{side} the onset</th>
          </tr>
          {spans.map((s) => (
            <SpanRow key={s.span_id} s={s} />
          ))}
        </tbody>
      ))}
    </table>
  );
}
