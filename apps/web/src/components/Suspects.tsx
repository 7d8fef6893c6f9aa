/** A regression's ranked suspect deploys, each with its reason and its time relative to the onset. */
import { useState } from 'react';
import { Link } from 'react-router-dom';
import type { Deploy, Suspect } from '@onset/contract';
import { KindBadge } from './Controls.tsx';
import { formatPercent } from '../lib/format.ts';
import { hostsText, versionText } from './graphs/markerData.ts';
import { VerdictBadge } from './Verdict.tsx';

export function SuspectList({
  suspects,
  deploys,
  onsetMs,
}: {
  suspects: Suspect[];
  deploys: Deploy[];
  onsetMs: number;
}) {
  return (
    <ol className="suspect-list">
      {suspects.map((s, i) => {
        const d = deploys.find((x) => String(x.id) === String(s.deploy_id));
        const at = s.at ?? d?.at;
        const deployHref = `/deploys?${new URLSearchParams({
          marker: String(s.deploy_id),
          ...(at
            ? {
                from: new Date(Date.parse(at) - 6 * 3_600_000).toISOString(),
                to: new Date(Date.parse(at) + 6 * 3_600_000).toISOString(),
              }
            : {}),
        }).toString()}`;
        return (
          <li
            key={`${s.deploy_id}-${i}`}
            className={i === 0 ? 'top' : ''}
            data-deploy-id={s.deploy_id}
          >
            <div className="suspect-head">
              <span className="suspect-rank">#{i + 1}</span> <KindBadge kind={s.kind} />{' '}
              <b>{suspectText(s, d)}</b>
              <span className="suspect-score" title="attribution score">
                <span className="score-track" aria-hidden="true">
                  <span
                    className="score-fill"
                    style={{ width: `${Math.max(0, Math.min(1, s.score)) * 100}%` }}
                  />
                </span>
                {formatPercent(s.score, 0)}
              </span>
            </div>
            <div className="suspect-reason">{s.reason}</div>
            {s.hosts?.length ? <SuspectHosts suspect={s} /> : null}
            <div className="muted small">
              <Link to={deployHref}>deploy {s.deploy_id}</Link>
              {' · '}
              <Link to={`${deployHref}#verdict`} className="suspect-verdict">
                verdict <VerdictBadge deployId={String(s.deploy_id)} />
              </Link>
              {at ? ' · ' : ''}
              {at ? relativeToOnset(Date.parse(at), onsetMs) : ''}
              {d?.description ? <> · {d.description}</> : null}
            </div>
          </li>
        );
      })}
    </ol>
  );
}

/**
 * The rollout's hosts as the server ordered them (the regressed hosts it covers
 * first), its coverage, and the rest of the list one click away.
 */
export function SuspectHosts({ suspect: s, max = 3 }: { suspect: Suspect; max?: number }) {
  const [open, setOpen] = useState(false);
  // Only the hosts feeding this series are named; other services' hosts are a count.
  const hosts = s.hosts.slice(0, s.series_hosts ?? s.hosts.length);
  const others = s.hosts.length - hosts.length;
  const shown = open ? hosts : hosts.slice(0, max);
  const covered = s.coverage?.covered ?? 0;
  return (
    <div className="suspect-hosts small" data-testid="suspect-hosts">
      {s.coverage ? (
        <span className="suspect-coverage">
          covers {s.coverage.covered} of {s.coverage.regressed} regressed host
          {s.coverage.regressed === 1 ? '' : 's'}
        </span>
      ) : null}
      {s.coverage ? ' · ' : ''}
      {hosts.length ? (hosts.length === 1 ? 'host ' : 'hosts ') : ''}
      {shown.map((h, i) => (
        <span key={h}>
          {i ? ', ' : ''}
          <span className={i < covered ? 'mono regressed-host' : 'mono'}>{h}</span>
        </span>
      ))}
      {hosts.length > max ? (
        <>
          {' '}
          <button
            type="button"
            className="link-button"
            aria-expanded={open}
            onClick={() => setOpen(!open)}
          >
            {open ? 'show fewer' : `+${hosts.length - max} more`}
          </button>
        </>
      ) : null}
      {others > 0 ? (
        <span className="muted">
          {hosts.length ? ' and ' : ''}
          {others} {hosts.length ? 'other ' : ''}
          {others === 1 ? 'host' : 'hosts'} of other services
        </span>
      ) : null}
    </div>
  );
}

export function suspectText(s: Suspect, d?: Deploy): string {
  const v = versionText({
    component: s.component ?? d?.component ?? null,
    from_version: s.from_version ?? d?.from_version ?? null,
    to_version: s.to_version ?? d?.to_version ?? null,
    commit: d?.commit ?? null,
  });
  // A long host list is the expandable line below the reason, not the title.
  const hosts = s.hosts?.length
    ? s.hosts.slice(0, s.series_hosts ?? s.hosts.length)
    : (d?.hosts ?? []);
  const where =
    s.service ?? d?.service ?? (hosts.length > 3 ? `${hosts.length} hosts` : hostsText(hosts));
  return [where, v].filter(Boolean).join(' ');
}

export function relativeToOnset(atMs: number, onsetMs: number): string {
  const min = Math.round((onsetMs - atMs) / 60_000);
  if (min === 0) return 'at the onset';
  const span =
    Math.abs(min) < 120 ? `${Math.abs(min)} min` : `${(Math.abs(min) / 60).toFixed(1)} h`;
  return min > 0 ? `${span} before the onset` : `${span} after the onset`;
}
