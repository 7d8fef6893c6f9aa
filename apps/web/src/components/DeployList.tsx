/**
 * Deploy markers as a table. Everything from CI (description, component,
 * versions, URL) is rendered as React text; only http(s) URLs become links.
 */
import { memo } from 'react';
import type { Deploy } from '@onset/contract';
import { KindBadge } from './Controls.tsx';
import { hostsText, versionText } from './graphs/markerData.ts';
import { formatAgo, formatInstant } from '../state/timeRange.ts';
import { safeHttpUrl } from '../lib/format.ts';
import { VerdictBadge } from './Verdict.tsx';

/** Rows whose verdict is fetched as the list shows (the newest first); the rest on a click. */
const VERDICT_ROWS = 100;

export const DeployList = memo(function DeployList({
  deploys,
  highlightId,
  suspects,
  compact,
  onVerdict,
}: {
  deploys: readonly Deploy[];
  highlightId?: string | null;
  suspects?: ReadonlyMap<string, number>;
  compact?: boolean;
  /** Show a verdict column; clicking a verdict opens it (the deploys page selects the marker). */
  onVerdict?: (id: string) => void;
}) {
  const now = Date.now();
  return (
    <table className="table deploy-table">
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Kind</th>
          <th scope="col">Where</th>
          <th scope="col">Change</th>
          {compact ? null : <th scope="col">Source</th>}
          <th scope="col">Description</th>
          {onVerdict ? <th scope="col">Verdict</th> : null}
        </tr>
      </thead>
      <tbody>
        {deploys.map((d, i) => {
          const url = safeHttpUrl(d.url);
          const rank = suspects?.get(String(d.id));
          return (
            <tr
              key={d.id}
              className={`${highlightId === String(d.id) ? 'highlight' : ''}${rank === 1 ? ' top-suspect-row' : ''}`}
              data-deploy-id={d.id}
            >
              <td title={new Date(d.at).toISOString()}>
                <div>{formatInstant(Date.parse(d.at))}</div>
                <div className="muted small">{formatAgo(Date.parse(d.at), now)}</div>
              </td>
              <td>
                <KindBadge kind={d.kind} />
                {rank ? (
                  <span className={`suspect-tag${rank === 1 ? ' top' : ''}`}>
                    {rank === 1 ? 'top suspect' : `suspect #${rank}`}
                  </span>
                ) : null}
              </td>
              <td>
                {d.service ? <div>{d.service}</div> : null}
                {d.hosts && d.hosts.length ? (
                  <div className="muted small" title={d.hosts.join(', ')}>
                    {hostsText(d.hosts)}
                  </div>
                ) : null}
                {d.environment ? <div className="muted small">{d.environment}</div> : null}
              </td>
              <td className="mono">
                {versionText(d) || '–'}
                {d.commit && versionText(d).indexOf(d.commit.slice(0, 12)) < 0 ? (
                  <div className="muted small">{d.commit.slice(0, 12)}</div>
                ) : null}
              </td>
              {compact ? null : (
                <td>
                  {d.source === 'inferred' ? (
                    <span className="tag">inferred</span>
                  ) : (
                    <span className="tag">api</span>
                  )}
                </td>
              )}
              <td className="desc">
                {d.description ? (
                  <span className="deploy-desc">{d.description}</span>
                ) : (
                  <span className="muted">–</span>
                )}
                {url ? (
                  <div>
                    <a href={url} target="_blank" rel="noopener noreferrer nofollow">
                      CI run ↗
                    </a>
                  </div>
                ) : d.url ? (
                  <div className="muted small" title="Only http(s) links are opened">
                    {d.url}
                  </div>
                ) : null}
              </td>
              {onVerdict ? (
                <td className="verdict-cell">
                  <button
                    type="button"
                    className="link-button verdict-link"
                    title="show this deploy's verdict in full"
                    onClick={() => onVerdict(String(d.id))}
                  >
                    {i < VERDICT_ROWS ? <VerdictBadge deployId={String(d.id)} /> : 'show'}
                  </button>
                </td>
              ) : null}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
});

/** A compact one-line-per-marker list (Overview). */
export function DeployFeed({ deploys }: { deploys: readonly Deploy[] }) {
  const now = Date.now();
  return (
    <ul className="deploy-feed">
      {deploys.map((d) => (
        <li key={d.id} data-deploy-id={d.id}>
          <span className="feed-time muted small" title={new Date(d.at).toISOString()}>
            {formatAgo(Date.parse(d.at), now)}
          </span>
          <KindBadge kind={d.kind} />
          <span className="feed-main">
            <b>{d.service ?? (d.hosts?.length ? hostsText(d.hosts, 2) : '–')}</b>{' '}
            <span className="mono small">{versionText(d)}</span>
            {d.source === 'inferred' ? <span className="tag">inferred</span> : null}
            {d.description ? <span className="feed-desc muted"> {d.description}</span> : null}
          </span>
        </li>
      ))}
    </ul>
  );
}
