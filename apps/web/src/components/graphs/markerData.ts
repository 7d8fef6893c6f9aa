/**
 * Deploy markers on time charts: which ones fall in the visible range, what
 * each says in one short line, and which is the top suspect. Pure.
 * Descriptions come from CI and are only ever rendered as text.
 */
import type { Deploy } from '@onset/contract';

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

export function deployTitle(d: Deploy): string {
  const where = [d.service, d.hosts && d.hosts.length ? hostsText(d.hosts) : null]
    .filter(Boolean)
    .join(' on ');
  const what = versionText(d);
  return [d.kind, what, where ? `(${where})` : ''].filter(Boolean).join(' ');
}

export function hostsText(hosts: readonly string[], max = 3): string {
  if (hosts.length <= max) return hosts.join(', ');
  return `${hosts.slice(0, max).join(', ')} +${hosts.length - max} more`;
}

export function toMarkers(
  deploys: readonly Deploy[],
  range: { fromMs: number; toMs: number },
  suspects: ReadonlyArray<{ deploy_id: string; reason?: string }> = [],
): ChartMarker[] {
  const rank = new Map<string, { rank: number; reason?: string }>();
  suspects.forEach((s, i) => {
    if (!rank.has(String(s.deploy_id)))
      rank.set(String(s.deploy_id), { rank: i + 1, reason: s.reason });
  });
  const out: ChartMarker[] = [];
  for (const d of deploys) {
    const t = Date.parse(d.at);
    if (!(t >= range.fromMs && t <= range.toMs)) continue;
    const r = rank.get(String(d.id));
    const v = versionText(d);
    out.push({
      id: String(d.id),
      t: t / 1000,
      kind: d.kind,
      label: v ? `${d.kind} ${v}` : d.kind,
      title: deployTitle(d),
      description: d.description ?? null,
      suspectRank: r?.rank ?? 0,
      reason: r?.reason,
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
