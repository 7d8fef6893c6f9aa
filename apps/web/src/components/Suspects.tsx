/** A regression's ranked suspect deploys, each with its reason and its time relative to the onset. */
import { Link } from 'react-router-dom';
import type { Deploy, Suspect } from '@onset/contract';
import { KindBadge } from './Controls.tsx';
import { formatPercent } from '../lib/format.ts';
import { hostsText, versionText } from './graphs/markerData.ts';

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
            <div className="muted small">
              <Link
                to={`/deploys?${new URLSearchParams({
                  marker: String(s.deploy_id),
                  ...(at
                    ? {
                        from: new Date(Date.parse(at) - 6 * 3_600_000).toISOString(),
                        to: new Date(Date.parse(at) + 6 * 3_600_000).toISOString(),
                      }
                    : {}),
                }).toString()}`}
              >
                deploy {s.deploy_id}
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

export function suspectText(s: Suspect, d?: Deploy): string {
  const v = versionText({
    component: s.component ?? d?.component ?? null,
    from_version: s.from_version ?? d?.from_version ?? null,
    to_version: s.to_version ?? d?.to_version ?? null,
    commit: d?.commit ?? null,
  });
  const where =
    s.service ??
    d?.service ??
    (s.hosts?.length ? hostsText(s.hosts) : d?.hosts?.length ? hostsText(d.hosts) : '');
  return [where, v].filter(Boolean).join(' ');
}

export function relativeToOnset(atMs: number, onsetMs: number): string {
  const min = Math.round((onsetMs - atMs) / 60_000);
  if (min === 0) return 'at the onset';
  const span =
    Math.abs(min) < 120 ? `${Math.abs(min)} min` : `${(Math.abs(min) / 60).toFixed(1)} h`;
  return min > 0 ? `${span} before the onset` : `${span} after the onset`;
}
