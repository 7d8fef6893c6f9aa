/** Deploys: a timeline of markers (one lane per service) with filters, and the full list. */
import { useMemo, useState } from 'react';
import { Link } from 'react-router-dom';
import { useDeploys } from './api.ts';
import { useRegressions } from '../regressions/api.ts';
import type { Deploy, Regression } from '@onset/contract';
import { linkWithGlobals, useRange, useUrlState } from '../../state/url.ts';
import { formatChange } from '../../lib/format.ts';
import { formatInstant, resolveRange } from '../../state/timeRange.ts';
import {
  filterDeploys,
  timelineLanes,
  timelineTicks,
} from '../../components/graphs/timelineData.ts';
import { DEPLOY_KINDS as KINDS, isOneOf } from '@onset/contract';
import { deployTitle, kindLetter, stackChips } from '../../components/graphs/markerData.ts';
import { DeployList } from '../../components/DeployList.tsx';
import { DeployVerdict } from '../../components/Verdict.tsx';
import { Empty, QueryView } from '../../components/States.tsx';
import { Panel, Select } from '../../components/Controls.tsx';

export default function DeploysPage() {
  const { get, set } = useUrlState();
  const [range] = useRange();
  const filters = {
    kind: get('kind'),
    service: get('service'),
    host: get('host'),
    source: get('source'),
  };
  const query = useDeploys({
    from: range.from,
    to: range.to,
    kind: isOneOf(KINDS, filters.kind) ? filters.kind : undefined,
    service: filters.service || undefined,
    host: filters.host || undefined,
  });
  // Options come from an unfiltered fetch so a filter never hides its own alternatives.
  const everything = useDeploys({ from: range.from, to: range.to });
  const all = everything.data ?? [];
  const services = useMemo(
    () => [...new Set(all.map((d) => d.service).filter((s): s is string => !!s))].sort(),
    [all],
  );
  const hosts = useMemo(() => [...new Set(all.flatMap((d) => d.hosts ?? []))].sort(), [all]);
  const selected = get('marker');

  return (
    <div className="page">
      <div className="page-head">
        <h1>Deploys</h1>
      </div>
      <form
        className="pickers"
        onSubmit={(e) => e.preventDefault()}
        aria-label="Filter deploy markers"
      >
        <Select
          label="Kind"
          value={filters.kind}
          options={[...KINDS]}
          allLabel="All kinds"
          onChange={(v) => set({ kind: v || null })}
        />
        <Select
          label="Service"
          value={filters.service}
          options={services}
          allLabel="All services"
          onChange={(v) => set({ service: v || null })}
        />
        <Select
          label="Host"
          value={filters.host}
          options={hosts}
          allLabel="All hosts"
          onChange={(v) => set({ host: v || null })}
        />
        <Select
          label="Source"
          value={filters.source}
          options={[
            { value: 'api', label: 'api (CI hooks)' },
            { value: 'inferred', label: 'inferred (new versions seen)' },
          ]}
          allLabel="Any source"
          onChange={(v) => set({ source: v || null })}
        />
      </form>
      <QueryView
        query={query}
        what="deploy markers"
        height={320}
        isEmpty={(d) => filterDeploys(d, filters).length === 0}
        empty={
          <Empty title="No deploy markers in this range" height={320}>
            Widen the time range or clear a filter. CI sends markers with{' '}
            <code>POST /api/v1/deploys</code> (kind code, dependency, kernel, config or infra);
            Onset also infers them when a host reports a new <code>os.version</code> or a service a
            new version.
          </Empty>
        }
      >
        {(data) => {
          const shown = filterDeploys(data, filters).sort(
            (a, b) => Date.parse(b.at) - Date.parse(a.at),
          );
          return (
            <>
              <Panel title={`Timeline (${shown.length} markers)`}>
                <Timeline
                  deploys={shown}
                  range={resolveRange(range, Date.now())}
                  selected={selected}
                  onSelect={(id) => set({ marker: id })}
                />
              </Panel>
              {selected ? (
                <SelectedVerdict
                  deploy={shown.find((d) => String(d.id) === selected)}
                  id={selected}
                />
              ) : null}
              <BlamedBy deploys={shown} selected={selected} />
              <Panel title="All markers">
                <DeployList
                  deploys={shown}
                  highlightId={selected}
                  onVerdict={(id) => set({ marker: id })}
                />
              </Panel>
            </>
          );
        }}
      </QueryView>
    </div>
  );
}

/** The selected marker's verdict in full: did this deploy make latency worse, by the numbers. */
function SelectedVerdict({ deploy, id }: { deploy?: Deploy; id: string }) {
  return (
    <Panel id="verdict" title={`Verdict of ${deploy ? deployTitle(deploy) : `deploy ${id}`}`}>
      <DeployVerdict deployId={id} />
    </Panel>
  );
}

/**
 * Deploys that regressions blame (a regression's ranked suspects, as the
 * server attributed them): each with its regressions, linked both ways. The
 * selected marker first.
 */
function BlamedBy({ deploys, selected }: { deploys: Deploy[]; selected: string }) {
  const { params } = useUrlState();
  const oldest = deploys.reduce((m, d) => Math.min(m, Date.parse(d.at)), Date.now());
  const regressions = useRegressions({
    status: 'all',
    since: new Date(oldest).toISOString(),
    limit: 1000,
  });
  const byDeploy = useMemo(() => {
    const m = new Map<string, Array<{ r: Regression; rank: number }>>();
    for (const r of regressions.data ?? [])
      (r.suspects ?? []).forEach((sus, i) => {
        const k = String(sus.deploy_id);
        m.set(k, [...(m.get(k) ?? []), { r, rank: i + 1 }]);
      });
    return m;
  }, [regressions.data]);
  const blamed = deploys
    .filter((d) => byDeploy.has(String(d.id)))
    .sort((a, b) => Number(String(b.id) === selected) - Number(String(a.id) === selected));
  if (!blamed.length) return null;
  return (
    <Panel title={`Deploys that regressions blame (${blamed.length})`}>
      <ul className="plain-list" data-testid="blamed-deploys">
        {blamed.map((d) => (
          <li key={d.id} data-deploy-id={d.id}>
            <b>{deployTitle(d)}</b>{' '}
            <span className="muted small">{formatInstant(Date.parse(d.at))}</span>
            <ul>
              {byDeploy.get(String(d.id))!.map(({ r, rank }) => (
                <li key={r.id}>
                  <Link
                    to={linkWithGlobals(`/regressions/${encodeURIComponent(r.id)}`, params, {
                      from: null,
                      to: null,
                    })}
                  >
                    {r.name} on {r.service} · {r.op}
                  </Link>{' '}
                  <span className="muted small">
                    {rank === 1 ? 'top suspect' : `suspect #${rank}`} · p99{' '}
                    {formatChange(r.before.p99_ms, r.after.p99_ms, r.ratio_p99)} · {r.status}
                  </span>
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
    </Panel>
  );
}

function Timeline({
  deploys,
  range,
  selected,
  onSelect,
}: {
  deploys: Deploy[];
  range: { fromMs: number; toMs: number };
  selected: string;
  onSelect: (id: string) => void;
}) {
  const lanes = timelineLanes(deploys, range);
  const [hover, setHover] = useState<string | null>(null);
  return (
    <div className="timeline" role="list" aria-label="Deploy markers over time">
      {lanes.map((lane) => {
        // Markers closer than a dot's width (on a ~1,000 px track) stack instead of hiding each other.
        const rows = stackChips(
          lane.items.map((i) => i.pos * 1000),
          22,
          4,
        );
        const height = 26 + 22 * Math.max(0, ...rows);
        return (
          <div className="timeline-lane" key={lane.key} role="listitem">
            <div className="timeline-label" title={lane.label}>
              {lane.label}
            </div>
            <div className="timeline-track" style={{ height }}>
              {lane.items.map(({ deploy: d, pos }, idx) => (
                <button
                  key={d.id}
                  type="button"
                  className={`timeline-dot kind-${d.kind}${selected === String(d.id) ? ' selected' : ''}${d.source === 'inferred' ? ' inferred' : ''}`}
                  style={{ left: `${pos * 100}%`, top: 3 + rows[idx]! * 22 }}
                  aria-label={`${deployTitle(d)} at ${formatInstant(Date.parse(d.at))}`}
                  onClick={() => onSelect(String(d.id))}
                  onMouseEnter={() => setHover(String(d.id))}
                  onMouseLeave={() => setHover(null)}
                  onFocus={() => setHover(String(d.id))}
                  onBlur={() => setHover(null)}
                >
                  {kindLetter(d.kind)}
                  {hover === String(d.id) ? (
                    <span className="marker-tip" role="tooltip">
                      <span className="marker-tip-title">{deployTitle(d)}</span>
                      <span className="muted">{formatInstant(Date.parse(d.at), true)}</span>
                      {d.description ? (
                        <span className="marker-tip-desc">{d.description}</span>
                      ) : null}
                    </span>
                  ) : null}
                </button>
              ))}
            </div>
          </div>
        );
      })}
      <div className="timeline-lane timeline-axis" aria-hidden="true">
        <div className="timeline-label" />
        <div className="timeline-track">
          {timelineTicks(range).map((t) => (
            <span key={t.pos} className="timeline-tick" style={{ left: `${t.pos * 100}%` }}>
              {formatInstant(t.t)}
            </span>
          ))}
        </div>
      </div>
    </div>
  );
}
