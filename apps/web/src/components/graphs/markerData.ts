/**
 * Deploy markers on time charts: which ones fall in the visible range, what
 * each says in one short line, and which is the top suspect. Pure.
 * Descriptions come from CI and are only ever rendered as text.
 */
import type { Deploy, Suspect } from '@onset/contract';

export interface ChartMarker {
  id: string;
  /** Seconds since epoch. */
  t: number;
  kind: string;
  /** Short text for the chip on the chart, e.g. "kernel 4.15.0-36". */
  label: string;
  /** Longer one-line text for tooltips and the screen-reader description. */
  title: string;
  description: string | null;
  /** 1 for the top suspect, 2.. for the other suspects, 0 for other markers. */
  suspectRank: number;
  reason?: string;
}

/** One-letter badge per kind; colour-blind users get the letter, not only the colour. */
export function kindLetter(kind: string): string {
  return (
    (
      { code: 'C', dependency: 'D', kernel: 'K', config: 'F', infra: 'I' } as Record<string, string>
    )[kind] ?? '?'
  );
}

/** "hyper 0.12.35 → 0.13.1", "4.4.0-138 → 4.15.0-36", "9f2c1e0". */
export function versionText(
  d: Partial<Pick<Deploy, 'component' | 'from_version' | 'to_version' | 'commit'>>,
): string {
  const parts: string[] = [];
  if (d.component) parts.push(d.component);
  if (d.from_version && d.to_version) parts.push(`${d.from_version} → ${d.to_version}`);
  else if (d.to_version) parts.push(d.to_version);
  else if (d.commit) parts.push(d.commit.slice(0, 12));
  return parts.join(' ');
}

/** `hosts` text given once computed (a suspect's hosts of this series), else the marker's own hosts. */
export function deployTitle(d: Deploy, hosts?: string): string {
  const where = [d.service, hosts ?? (d.hosts && d.hosts.length ? hostsText(d.hosts) : null)]
    .filter(Boolean)
    .join(' on ');
  const what = versionText(d);
  return [d.kind, what, where ? `(${where})` : ''].filter(Boolean).join(' ');
}

export function hostsText(hosts: readonly string[], max = 3): string {
  if (hosts.length <= max) return hosts.join(', ');
  return `${hosts.slice(0, max).join(', ')} +${hosts.length - max} more`;
}

/**
 * A suspect's hosts as the server counted them for this series: the ones feeding it (the
 * first `series_hosts`), then how many belong to other services. "node-3, node-4 and 2 other
 * hosts of other services".
 */
export function suspectHostsText(
  s: Pick<Suspect, 'hosts'> & Partial<Pick<Suspect, 'series_hosts'>>,
  max = 3,
): string {
  const n = s.series_hosts ?? s.hosts.length;
  const own = hostsText(s.hosts.slice(0, n), max);
  const other = s.hosts.length - n;
  if (other <= 0) return own;
  const noun = other === 1 ? 'host' : 'hosts';
  return own
    ? `${own} and ${other} other ${noun} of other services`
    : `${other} ${noun} of other services`;
}

type SuspectRef = Pick<Suspect, 'deploy_id'> &
  Partial<Pick<Suspect, 'reason' | 'deploy_ids' | 'hosts' | 'series_hosts'>>;

/**
 * One chip per deploy marker, except that the markers of one suspect's rollout (the server's
 * `deploy_ids`: posted per host, inferred) are one chip, named after the suspect's marker and
 * listing the suspect's hosts of this series.
 */
export function toMarkers(
  deploys: readonly Deploy[],
  range: { fromMs: number; toMs: number },
  suspects: readonly SuspectRef[] = [],
): ChartMarker[] {
  const rank = new Map<string, { rank: number; suspect: SuspectRef }>();
  suspects.forEach((s, i) => {
    for (const id of [s.deploy_id, ...(s.deploy_ids ?? [])])
      if (!rank.has(String(id))) rank.set(String(id), { rank: i + 1, suspect: s });
  });
  // The marker each suspect's chip is drawn at: its named marker, else any of its rollout's.
  const drawnAt = new Map<number, string>();
  for (const d of deploys) {
    const r = rank.get(String(d.id));
    if (!r) continue;
    const named = String(d.id) === String(r.suspect.deploy_id);
    if (named || !drawnAt.has(r.rank)) drawnAt.set(r.rank, String(d.id));
  }
  const out: ChartMarker[] = [];
  for (const d of deploys) {
    const t = Date.parse(d.at);
    if (!(t >= range.fromMs && t <= range.toMs)) continue;
    const r = rank.get(String(d.id));
    if (r && drawnAt.get(r.rank) !== String(d.id)) continue;
    const v = versionText(d);
    const hosts = r?.suspect.hosts?.length ? suspectHostsText(r.suspect as Suspect) : undefined;
    out.push({
      id: String(d.id),
      t: t / 1000,
      kind: d.kind,
      label: v ? `${d.kind} ${v}` : d.kind,
      title: deployTitle(d, hosts),
      description: d.description ?? null,
      suspectRank: r?.rank ?? 0,
      reason: r?.suspect.reason,
    });
  }
  // Suspects last so they draw on top.
  return out.sort(
    (a, b) => (a.suspectRank === 1 ? 1 : 0) - (b.suspectRank === 1 ? 1 : 0) || a.t - b.t,
  );
}

/**
 * Chips that would overlap on the chart are stacked in rows: returns the row
 * (0, 1, 2…) of each marker given its x position in CSS px.
 */
export function stackChips(xs: readonly number[], chipWidth: number, maxRows = 3): number[] {
  const rowEnds: number[] = [];
  const order = xs.map((x, i) => ({ x, i })).sort((a, b) => a.x - b.x);
  const rows = new Array<number>(xs.length).fill(0);
  for (const { x, i } of order) {
    let r = rowEnds.findIndex((end) => x - chipWidth / 2 >= end);
    if (r === -1)
      r = rowEnds.length < maxRows ? rowEnds.length : rowEnds.indexOf(Math.min(...rowEnds));
    rowEnds[r] = x + chipWidth / 2 + 2;
    rows[i] = r;
  }
  return rows;
}
