/**
 * The Deploys timeline: one lane per service (host-only changes such as
 * kernel rollouts get a lane of their own), each marker at its fraction of
 * the visible range. Pure.
 */
import type { Deploy } from '@onset/contract';

interface TimelineItem {
  deploy: Deploy;
  /** 0..1 across the range. */
  pos: number;
}

export interface TimelineLane {
  key: string;
  label: string;
  items: TimelineItem[];
}

export const HOST_LANE = 'hosts (no service)';

function laneKey(d: Deploy): string {
  return d.service || HOST_LANE;
}

export function timelineLanes(
  deploys: readonly Deploy[],
  range: { fromMs: number; toMs: number },
): TimelineLane[] {
  const width = range.toMs - range.fromMs;
  const lanes = new Map<string, TimelineLane>();
  for (const d of deploys) {
    const t = Date.parse(d.at);
    if (!(t >= range.fromMs && t <= range.toMs) || !(width > 0)) continue;
    const key = laneKey(d);
    let lane = lanes.get(key);
    if (!lane) lanes.set(key, (lane = { key, label: key, items: [] }));
    lane.items.push({ deploy: d, pos: (t - range.fromMs) / width });
  }
  for (const l of lanes.values()) l.items.sort((a, b) => a.pos - b.pos);
  // Busiest lanes first; the host lane last, it is the odd one out.
  return [...lanes.values()].sort(
    (a, b) =>
      (a.key === HOST_LANE ? 1 : 0) - (b.key === HOST_LANE ? 1 : 0) ||
      b.items.length - a.items.length ||
      a.key.localeCompare(b.key),
  );
}

export interface DeployFilters {
  kind?: string;
  service?: string;
  host?: string;
  source?: string;
}

/** Client-side filtering (the server filters too; this keeps old servers and `source` working). */
export function filterDeploys(deploys: readonly Deploy[], f: DeployFilters): Deploy[] {
  return deploys.filter(
    (d) =>
      (!f.kind || d.kind === f.kind) &&
      (!f.service || d.service === f.service) &&
      (!f.host || (d.hosts ?? []).includes(f.host)) &&
      (!f.source || (d.source ?? 'api') === f.source),
  );
}

/** Evenly spaced axis labels for the timeline (positions 0..1 and instants). */
export function timelineTicks(
  range: { fromMs: number; toMs: number },
  count = 6,
): Array<{ pos: number; t: number }> {
  const out: Array<{ pos: number; t: number }> = [];
  for (let i = 0; i <= count; i++)
    out.push({ pos: i / count, t: range.fromMs + ((range.toMs - range.fromMs) * i) / count });
  return out;
}
