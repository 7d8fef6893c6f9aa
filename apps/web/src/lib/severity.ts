/**
 * Ranking open regressions for the overview: ratio × traffic × SLO impact.
 * - ratio: how many times slower (the worse of p50 and p99), on a log scale
 *   so ×700 outranks ×2 without drowning everything else;
 * - traffic: calls after the onset (log), so a busy endpoint outranks a cron job;
 * - SLO impact: an SLO over the same series that is paging, ticketing, or
 *   whose threshold the new level crosses multiplies the score.
 * Pure; which SLOs watch a series is the server's answer (GET /api/v1/slos/watching).
 */
import type { Regression, Slo } from '@onset/contract';

/** Which SLOs watch which series (series id → SLO ids), as the server answers it. */
export type Watching = ReadonlyMap<string, readonly string[]>;

/** The SLOs that watch a regression's series, by the server's membership answer. */
export function slosWatching(
  r: Pick<Regression, 'series_id'>,
  slos: readonly Slo[],
  watching: Watching,
): Slo[] {
  const ids = new Set(watching.get(r.series_id) ?? []);
  return slos.filter((s) => ids.has(s.id));
}

function worstRatio(r: Pick<Regression, 'ratio_p50' | 'ratio_p99'>): number {
  return Math.max(r.ratio_p50 || 0, r.ratio_p99 || 0, 1);
}

/** 1 (no SLO involved) … 4 (an SLO on this series is paging). */
function sloImpact(r: Regression, slos: readonly Slo[], watching: Watching): number {
  let impact = 1;
  for (const s of slosWatching(r, slos, watching)) {
    const sev = s.status?.alert?.severity;
    if (sev === 'page') impact = Math.max(impact, 4);
    else if (sev === 'ticket') impact = Math.max(impact, 2.5);
    else if (r.after.p99_ms > s.threshold_ms) impact = Math.max(impact, 1.5);
  }
  return impact;
}

export function regressionScore(
  r: Regression,
  slos: readonly Slo[],
  watching: Watching = new Map(),
): number {
  const ratio = Math.log2(worstRatio(r)) + 0.1;
  const traffic = Math.log10(10 + Math.max(0, r.after?.count ?? 0));
  return ratio * traffic * sloImpact(r, slos, watching);
}

export function rankRegressions(
  rs: readonly Regression[],
  slos: readonly Slo[],
  watching: Watching = new Map(),
): Array<{ r: Regression; score: number }> {
  return rs
    .map((r) => ({ r, score: regressionScore(r, slos, watching) }))
    .sort((a, b) => b.score - a.score || Date.parse(b.r.onset) - Date.parse(a.r.onset));
}

/** Which quantile tells the story: the engine's `metric`, else the one with the bigger ratio. */
export function headlineQuantile(
  r: Pick<Regression, 'ratio_p50' | 'ratio_p99'> & Partial<Pick<Regression, 'metric'>>,
): 'p50' | 'p99' {
  if (r.metric === 'p50' || r.metric === 'p99') return r.metric;
  return (r.ratio_p99 || 0) > (r.ratio_p50 || 0) ? 'p99' : 'p50';
}

export type SeverityLevel = 'high' | 'medium' | 'low';

export function severityLevel(score: number, maxScore: number): SeverityLevel {
  const f = maxScore > 0 ? score / maxScore : 0;
  return f > 0.66 ? 'high' : f > 0.33 ? 'medium' : 'low';
}
