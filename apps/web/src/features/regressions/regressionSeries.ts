import type { EdgeResponse, Regression, Series } from '@onset/contract';

/** The regression's series: by id when the engine gives one, else by labels. */
export function findSeries(
  r: Pick<Regression, 'series_id' | 'service' | 'op' | 'view' | 'name' | 'peer'>,
  list: readonly Series[],
): Series | undefined {
  if (r.series_id) {
    const s = list.find((x) => x.id === String(r.series_id));
    if (s) return s;
  }
  return list.find(
    (s) =>
      s.service === r.service &&
      s.op === r.op &&
      s.view === r.view &&
      s.name === r.name &&
      (s.peer ?? '') === (r.peer ?? ''),
  );
}

/**
 * Whose hosts the cohort split can look at. Edge series are filed under the
 * caller, but the gap and server views are fed by the callee's hosts, so a
 * callee's version or dependency bump shows there; the client view shows the
 * caller's hosts.
 */
type SeriesLabels = Pick<Series, 'id' | 'service' | 'view' | 'peer'>;

export function cohortSources(
  series: SeriesLabels,
  edge: EdgeResponse | undefined,
): Array<{ id: string; label: string }> {
  const whose = (s: SeriesLabels) =>
    s.peer && (s.view === 'gap' || s.view === 'server') ? s.peer : s.service;
  const out: Array<{ id: string; label: string }> = [];
  const add = (s: SeriesLabels | null | undefined) => {
    if (!s || out.some((o) => o.id === s.id)) return;
    const label = `${whose(s)} hosts (${s.view} view)`;
    if (out.some((o) => o.label.startsWith(`${whose(s)} hosts`))) return;
    out.push({ id: s.id, label });
  };
  add(series);
  const view = (v: string) => edge?.views.find((x) => x.view === v)?.series;
  add(view('gap'));
  add(view('server'));
  add(view('client'));
  return out;
}
