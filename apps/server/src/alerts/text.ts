/**
 * What an alert says, in one place: its title, one line per quantile or
 * burn window (each with its own numbers) and its cause in one line. The API
 * (and so the UI and MCP) and every webhook format render this, from the
 * alert's numbers as they are now, so no reader shows a number the API does
 * not. Latencies, changes and burn rates are written by core's one rule.
 *
 * A new kind of alert plugs in with a renderer in RENDERERS; a kind without
 * one shows the title its policy stored.
 */
import type { AlertText, AlertTextLine, AlertType } from '@onset/contract';
import { formatBurn, formatChange, formatLatencyMs } from '@onset/core';

/** The parts of an alert its text is made of (a snapshot, a row or a fire input). */
export interface AlertTextInput {
  type: AlertType | 'test';
  title?: string | null;
  service?: string | null;
  op?: string | null;
  view?: string | null;
  series_name?: string | null;
  burn_rate?: number | null;
  window?: string | null;
  details?: Record<string, unknown>;
}

type Renderer = (a: AlertTextInput, d: Record<string, unknown>) => AlertText;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);
const obj = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/** "p99 43.9 ms → 14.5 s, ×330": one quantile with its own ratio; null without numbers. */
export function quantileChange(
  q: 'p50' | 'p99',
  before: unknown,
  after: unknown,
  ratio: unknown,
): string | null {
  const b = num(obj(before)?.[`${q}_ms`]);
  const a = num(obj(after)?.[`${q}_ms`]);
  if (b === null || a === null) return null;
  return `${q} ${formatChange(b, a, num(ratio))}`;
}

const range = (r: unknown): string | null => {
  if (!Array.isArray(r) || r.length !== 2) return null;
  const [lo, hi] = r.map(num);
  return lo === null || hi === null ? null : `${formatLatencyMs(lo)}–${formatLatencyMs(hi)}`;
};

/** The title the alert's policy stored: for kinds without a renderer, and snapshots without numbers. */
const stored: Renderer = (a, d) => ({
  title: a.title ?? `${a.type} alert`,
  cause: str(d.cause),
  lines: [],
});

/** The likeliest cause of a regression: a mechanism the spans match, else its top deploy, else its slow cohort. */
function regressionCause(d: Record<string, unknown>): string | null {
  const hint = obj(d.hint);
  if (hint && str(hint.title))
    return `likely: ${str(hint.title)} (confidence ${(num(hint.confidence) ?? 0).toFixed(2)})`;
  const s = obj(d.suspect);
  if (s) {
    const what = [str(s.service) ?? str(s.component), str(s.kind) ? `${str(s.kind)} deploy` : null]
      .filter(Boolean)
      .join(' ');
    const versions =
      str(s.from_version) || str(s.to_version)
        ? ` ${str(s.from_version) ?? '?'} → ${str(s.to_version) ?? '?'}`
        : '';
    return `suspect: ${what || 'deploy'}${versions} (score ${(num(s.score) ?? 0).toFixed(2)})`;
  }
  const c = obj(d.cohort);
  if (c && str(c.attribute) && Array.isArray(c.slow) && c.slow.length)
    return `only ${str(c.attribute)} ${c.slow.map(String).join(', ')} is slow`;
  return null;
}

const regression: Renderer = (a, d) => {
  const edge = str(d.peer) ? ` → ${str(d.peer)}` : '';
  const what = `Regression: ${a.service ?? '?'} ${a.op ?? '?'} "${a.series_name ?? '?'}"${edge} (${a.view ?? '?'})`;
  const p99 = quantileChange('p99', d.before, d.after, d.ratio_p99);
  const p50 = quantileChange('p50', d.before, d.after, d.ratio_p50);
  const band = obj(d.band);
  const floor = d.shape === 'floor' && band ? [range(band.after_ms), range(band.before_ms)] : null;
  const lines: AlertTextLine[] = [];
  if (floor?.[0] && floor[1])
    lines.push({ label: 'p99 band', text: `p99 now steady at ${floor[0]} (was ${floor[1]})` });
  if (p99) lines.push({ label: 'p99', text: p99 });
  if (p50) lines.push({ label: 'p50', text: p50 });
  // The headline: the quantile the detector says moved most (a floor: its band).
  const metric = d.metric === 'p50' ? 'p50' : 'p99';
  const head =
    floor?.[0] && floor[1]
      ? `${lines[0]!.text}: the slowest calls now wait a fixed time`
      : ((metric === 'p50' ? p50 : p99) ?? p99 ?? p50 ?? '');
  const cause = regressionCause(d);
  // Without numbers (a snapshot from a caller that gave none) there is nothing to render.
  if (!lines.length && a.title) return { title: a.title, cause, lines };
  // The title is the one line a pager shows: what, how much, and why.
  const title = `${what}${head ? ` ${head}` : ''}${cause ? ` — ${cause}` : ''}`;
  return { title, cause, lines };
};

const sloBurn: Renderer = (a, d) => {
  const name = str(d.slo_name) ?? a.service ?? '?';
  const burn = num(a.burn_rate) ?? num(d.burn_long);
  if (burn === null && a.title) return stored(a, d);
  const long = a.window ?? str(d.long_window) ?? '?';
  const lines: AlertTextLine[] = [];
  lines.push({ label: `burn ${long}`, text: `${formatBurn(burn)} over ${long}` });
  if (str(d.short_window))
    lines.push({
      label: `burn ${str(d.short_window)}`,
      text: `${formatBurn(num(d.burn_short))} over ${str(d.short_window)}`,
    });
  const threshold = num(d.threshold_ms);
  const objective = num(d.objective);
  if (threshold !== null && objective !== null)
    lines.push({
      label: 'objective',
      text: `${pct(objective)} of requests under ${formatLatencyMs(threshold)} over ${str(d.slo_window) ?? '?'}`,
    });
  // The slow share the burn stands for: burn × the budget's share.
  const events = num(d.events_long);
  const cause =
    burn !== null && objective !== null && threshold !== null
      ? `${pct(burn * (1 - objective))} of ${events !== null ? `${events} ` : ''}requests over ${long} took longer than ${formatLatencyMs(threshold)} (the budget allows ${pct(1 - objective)})`
      : null;
  return {
    title: `SLO "${name}" is burning its error budget at ${formatBurn(burn)} over ${long}`,
    cause,
    lines,
  };
};

/** A share as a percentage with the digits it needs: 99.95%, 0.1%, 12.34%. */
function pct(x: number): string {
  return `${Number((x * 100).toPrecision(4))}%`;
}

/** A failed deploy verdict: its policy's title (the series and ratios), one line per failed series. */
const deployVerdict: Renderer = (a, d) => {
  const failed = Array.isArray(d.failed_series) ? d.failed_series.map(obj).filter(Boolean) : [];
  const x = (r: unknown) => (num(r) === null ? '?' : `×${Number(num(r)!.toPrecision(3))}`);
  const lines: AlertTextLine[] = failed.slice(0, 5).map((s) => ({
    label: `${str(s!.service) ?? '?'} ${str(s!.name) ?? '?'}${str(s!.peer) ? ` → ${str(s!.peer)}` : ''} (${str(s!.view) ?? '?'})`,
    text: `p50 ${x(s!.p50_ratio)}, p99 ${x(s!.p99_ratio)}: ${str(s!.reason) ?? ''}`,
  }));
  const deployed = str(d.deployed);
  const cause = deployed
    ? `${deployed} (deploy ${str(d.deploy_id) ?? '?'}, ${str(d.method) ?? '?'})`
    : null;
  return { title: a.title ?? 'Deploy verdict: fail', cause, lines };
};

const RENDERERS: { [K in AlertType | 'test']?: Renderer } = {
  regression,
  slo_burn: sloBurn,
  deploy_verdict: deployVerdict,
};

export function alertText(a: AlertTextInput): AlertText {
  return (RENDERERS[a.type] ?? stored)(a, a.details ?? {});
}
