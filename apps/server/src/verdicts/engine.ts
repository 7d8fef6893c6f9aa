/**
 * A deploy's verdict, computed on request from stored histograms (nothing is
 * stored: the same data gives the same answer). Which series, which method and
 * every threshold and test are core's verdict/ rule; this reads what it names.
 */
import {
  chooseMethod,
  Histogram,
  judgeVerdict,
  VERDICT_DEFAULTS,
  type VerdictSeriesInput,
  type VerdictSettings,
  detectOptionsFor,
} from '@onset/core';
import type { Verdict, VerdictRole, VerdictSeries } from '@onset/contract';
import type { VerdictServiceSettings } from '../config.ts';
import { getMarker, type MarkerRow } from '../deploys/queries.ts';
import { pairingCursorMs } from '../edges/pairing.ts';
import { MINUTE_LATENESS_MS } from '../detection/detect-options.ts';
import { regressionsNamingDeploy } from '../regressions/store.ts';
import type { Pool, Queryable } from '../db/pool.ts';
import { minuteHistograms, seriesTouchedBy, type JudgedSeries } from './read.ts';

const MIN = 60_000;
/** Rows listed in an answer (failing ones first); series_total counts them all. */
export const MAX_ROWS = 200;

/** What a request may set (VerdictQuery, parsed). */
export type VerdictOverrides = Partial<Omit<VerdictSettings, 'alpha'>>;

/** Defaults, then the service's ONSET_VERDICT_SERVICES entry, then the request. */
export function verdictSettings(
  services: Record<string, VerdictServiceSettings>,
  service: string | null,
  overrides: VerdictOverrides,
): VerdictSettings {
  const own = service !== null ? (services[service] ?? {}) : {};
  const defined = <T extends object>(o: T) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  return { ...VERDICT_DEFAULTS, ...defined(own), ...defined(overrides) };
}

const floorMinute = (ms: number) => Math.floor(ms / MIN) * MIN;
const ceilMinute = (ms: number) => Math.ceil(ms / MIN) * MIN;
const iso = (ms: number) => new Date(ms).toISOString();

function roleOf(m: MarkerRow, s: JudgedSeries): VerdictRole {
  if (m.service !== null && s.service === m.service) return 'service';
  if (m.service !== null && s.peer === m.service) return 'caller';
  return 'host';
}

const labelOf = (s: JudgedSeries) =>
  `${s.service} ${s.name}${s.peer ? ` → ${s.peer}` : ''} (${s.view})`;
const round = (x: number | null, digits = 4) =>
  x === null || !Number.isFinite(x) ? null : Number(x.toPrecision(digits));

export interface ComputedVerdict {
  verdict: Verdict;
  /** While pending: when the next look's minute settles (epoch ms). */
  nextLookMs: number | null;
}

/** The verdict of marker `id` as of `now`; null when the marker does not exist. */
export async function computeVerdict(
  db: Pool | Queryable,
  id: string,
  settingsOf: (service: string | null) => VerdictSettings,
  now: number,
): Promise<ComputedVerdict | null> {
  const m = await getMarker(db as Pool, id);
  if (!m) return null;
  const settings = settingsOf(m.service);
  const W = Math.round(settings.windowMs / MIN);
  const at = Date.parse(m.at);
  const start = ceilMinute(at);
  const end = start + W * MIN;
  const baseEnd = floorMinute(at);

  const all = await seriesTouchedBy(db, m);
  const own = all.filter((s) => roleOf(m, s) === 'service');
  const scopeHosts = (own.length ? own : all).flatMap((s) => s.hosts);
  const choice = chooseMethod(m.hosts, scopeHosts, m.service ?? 'the series it touches');
  const canary = choice.method === 'canary';
  const marked = new Set(m.hosts);
  // Canary: a series is judged when hosts on both sides feed it.
  const judged = canary
    ? all.filter((s) => s.hosts.some((h) => marked.has(h)) && s.hosts.some((h) => !marked.has(h)))
    : all;

  const readFrom = canary ? start : baseEnd - 2 * W * MIN;
  const rows = await minuteHistograms(
    db,
    judged.map((s) => s.id),
    readFrom,
    end,
  );
  const inputs = new Map<string, VerdictSeriesInput<JudgedSeries>>();
  const perMinute = () => Array.from({ length: W }, () => new Histogram());
  for (const s of judged)
    inputs.set(s.id, {
      key: s,
      floorUs: detectOptionsFor(s.view).floor ?? 0,
      candidate: perMinute(),
      baseline: canary ? perMinute() : new Histogram(),
      drift: canary ? null : new Histogram(),
    });
  for (const r of rows) {
    const input = inputs.get(r.series_id)!;
    const k = Math.floor((r.minute_ms - start) / MIN);
    if (canary) {
      const side = marked.has(r.host) ? input.candidate : (input.baseline as Histogram[]);
      side[k]!.addSparse(r.hist);
    } else if (r.minute_ms >= start) (input.candidate as Histogram[])[k]!.addSparse(r.hist);
    else if (r.minute_ms >= baseEnd - W * MIN && r.minute_ms < baseEnd)
      (input.baseline as Histogram).addSparse(r.hist);
    else if (r.minute_ms < baseEnd - W * MIN) input.drift!.addSparse(r.hist);
  }

  // A minute counts once its spans are in (ingest), and for edge views once pairing has them.
  let dataEnd = now;
  if (judged.some((s) => s.peer !== null))
    dataEnd = Math.min(dataEnd, (await pairingCursorMs(db)) ?? -Infinity);
  dataEnd -= MINUTE_LATENESS_MS;
  const settled = Math.max(0, Math.min(W, Math.floor((dataEnd - start) / MIN)));

  const regressions = await regressionsNamingDeploy(db, m.id);
  const result = judgeVerdict({
    method: choice.method,
    series: [...inputs.values()],
    settings,
    settledMinutes: settled,
    regressions: regressions.map((r) => ({
      reason: `regression ${r.id} on ${r.service} ${r.name} (${r.view}): ${r.reason}`,
    })),
    label: labelOf,
  });
  const decidedAt = result.byRegression
    ? Math.min(...regressions.map((r) => r.detected_at.getTime()))
    : result.decidedAtMinutes !== null
      ? start + result.decidedAtMinutes * MIN + MINUTE_LATENESS_MS
      : null;
  const series: VerdictSeries[] = result.rows
    .slice(0, MAX_ROWS)
    .map(({ key: s, judgement: j, verdict }) => ({
      series_id: s.id,
      service: s.service,
      op: s.op,
      view: s.view,
      name: s.name,
      peer: s.peer,
      role: roleOf(m, s),
      baseline: j.baseline,
      candidate: j.candidate,
      p50_ratio: ratioJson(j.p50Ratio),
      p99_ratio: ratioJson(j.p99Ratio),
      p_value: round(j.pValue, 3),
      prob_slower: round(j.probSlower, 3),
      verdict,
      reason: j.reason,
    }));
  const window = (from: number, to: number) => ({ from: iso(from), to: iso(to) });
  const verdict: Verdict = {
    deploy_id: m.id,
    verdict: result.outcome,
    reason: result.reason,
    decided_at: decidedAt !== null ? iso(decidedAt) : null,
    evaluated_at: iso(now),
    method: choice.method,
    method_reason: choice.reason,
    windows: canary
      ? { baseline: window(start, end), candidate: window(start, end), drift_guard: null }
      : {
          baseline: window(baseEnd - W * MIN, baseEnd),
          candidate: window(start, end),
          drift_guard: window(baseEnd - 2 * W * MIN, baseEnd - W * MIN),
        },
    canary_hosts: choice.canaryHosts,
    baseline_hosts: choice.baselineHosts,
    thresholds: {
      p50_ratio: settings.p50Ratio,
      p99_ratio: settings.p99Ratio,
      min_count: settings.minCount,
      alpha: settings.alpha,
      window_ms: settings.windowMs,
    },
    regressions: regressions.map((r) => ({
      id: r.id,
      series_id: r.series_id,
      reason: `${r.service} ${r.name}${r.peer ? ` → ${r.peer}` : ''} (${r.view}): ${r.reason}`,
    })),
    series_total: result.rows.length,
    series,
  };
  const nextLookMs =
    result.outcome === 'pending' ? start + (settled + 1) * MIN + MINUTE_LATENESS_MS : null;
  return { verdict, nextLookMs };
}

function ratioJson(r: { value: number; low: number; high: number } | null) {
  return r
    ? { value: round(r.value), low: round(r.low), high: round(r.high) }
    : { value: null, low: null, high: null };
}
