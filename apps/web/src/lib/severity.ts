/**
 * Ranking open regressions for the overview: ratio × traffic × SLO impact.
 * - ratio: how many times slower (the worse of p50 and p99), on a log scale
 *   so ×700 outranks ×2 without drowning everything else;
 * - traffic: calls after the onset (log), so a busy endpoint outranks a cron job;
 * - SLO impact: an SLO over the same series that is paging, ticketing, or
 *   whose threshold the new level crosses multiplies the score.
 * Pure; the server's own `severity`, when it sends one, is used as is.
 */
import type { Regression, Slo } from '@onset/contract';

export function sloMatches(
  slo: Slo,
  r: Pick<Regression, 'series_id' | 'service' | 'op' | 'view' | 'name' | 'peer'>,
): boolean {
  if (slo.series_id && r.series_id) return slo.series_id === r.series_id;
  if (slo.service !== r.service) return false;
  if (slo.op && slo.op !== r.op) return false;
  if (slo.view && slo.view !== r.view) return false;
  if (slo.peer && slo.peer !== (r.peer ?? '')) return false;
  if (slo.name_match) {
    try {
      if (!new RegExp(slo.name_match).test(r.name)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

export function worstRatio(r: Pick<Regression, 'ratio_p50' | 'ratio_p99'>): number {
  return Math.max(r.ratio_p50 || 0, r.ratio_p99 || 0, 1);
}

/** 1 (no SLO involved) … 4 (an SLO on this series is paging). */
export function sloImpact(r: Regression, slos: readonly Slo[]): number {
  let impact = 1;
  for (const s of slos) {
    if (!sloMatches(s, r)) continue;
    const sev = s.status?.alert?.severity;
    if (sev === 'page') impact = Math.max(impact, 4);
    else if (sev === 'ticket') impact = Math.max(impact, 2.5);
    else if (r.after.p99_ms > s.threshold_ms) impact = Math.max(impact, 1.5);
  }
  return impact;
}

export function regressionScore(r: Regression, slos: readonly Slo[]): number {
  const ratio = Math.log2(worstRatio(r)) + 0.1;
  const traffic = Math.log10(10 + Math.max(0, r.after?.count ?? 0));
  return ratio * traffic * sloImpact(r, slos);
}

export function rankRegressions(
  rs: readonly Regression[],
  slos: readonly Slo[],
): Array<{ r: Regression; score: number }> {
  return rs
    .map((r) => ({ r, score: regressionScore(r, slos) }))
    .sort((a, b) => b.score - a.score || Date.parse(b.r.onset) - Date.parse(a.r.onset));
}

/** Which quantile tells the story: the engine's `metric`, else the one with the bigger ratio. */
export function headlineQuantile(
  r: Pick<Regression, 'ratio_p50' | 'ratio_p99'> & Partial<Pick<Regression, 'metric'>>,
): 'p50' | 'p99' {
  if (r.metric === 'p50' || r.metric === 'p99') return r.metric;
  return (r.ratio_p99 || 0) > (r.ratio_p50 || 0) ? 'p99' : 'p50';
}

export function severityLevel(score: number, maxScore: number): 'high' | 'medium' | 'low' {
  const f = maxScore > 0 ? score / maxScore : 0;
  return f > 0.66 ? 'high' : f > 0.33 ? 'medium' : 'low';
}
