/**
 * Deploy verdicts (docs/verdicts.md): whether a deploy made latency worse,
 * from the histograms of the series it can affect. Pure: histograms in,
 * verdicts out. The server reads the histograms and applies this.
 */
import { Histogram } from '../histogram.ts';
import {
  countsOf,
  mannWhitneyHistograms,
  quantileEstimate,
  quantileRatio,
  tailTest,
  type RatioInterval,
} from './histogram-tests.ts';

const MIN = 60_000;

/** What a verdict applies; every field settable per request and per service. */
export interface VerdictSettings {
  /** Smallest candidate/baseline p50 ratio that fails. */
  p50Ratio: number;
  /** Smallest candidate/baseline p99 ratio that fails. */
  p99Ratio: number;
  /** Calls each side needs; fewer is inconclusive, never pass. */
  minCount: number;
  /** Significance level of the tests over the whole window (split over its looks). */
  alpha: number;
  /** The judged window after the marker. */
  windowMs: number;
}

export const VERDICT_DEFAULTS: VerdictSettings = {
  p50Ratio: 1.1,
  p99Ratio: 1.2,
  minCount: 300,
  alpha: 0.01,
  windowMs: 10 * MIN,
};

/** The first look at a window is after this many of its minutes (fewer say too little). */
export const FIRST_LOOK_MINUTES = 3;

export type RowVerdict = 'pass' | 'fail' | 'inconclusive';
export type VerdictOutcome = RowVerdict | 'pending';
export type Method = 'canary' | 'before_after';

export interface SideStats {
  count: number;
  /** ms, null without calls */
  p50: number | null;
  p99: number | null;
}

export interface RowJudgement {
  baseline: SideStats;
  candidate: SideStats;
  p50Ratio: RatioInterval | null;
  p99Ratio: RatioInterval | null;
  pValue: number | null;
  probSlower: number | null;
  verdict: RowVerdict;
  /** A row inconclusive only for want of calls (it does not keep a verdict from passing). */
  lowTraffic: boolean;
  reason: string;
  /** How far past its threshold the row's worse quantile is (1 = at it), for ordering. */
  severity: number;
}

/** How a method names its two sides in reasons. */
export interface SideNames {
  candidate: string;
  baseline: string;
}

export const SIDE_NAMES: Record<Method, SideNames> = {
  canary: { candidate: 'on the canary hosts', baseline: 'on the other hosts' },
  before_after: { candidate: 'after the deploy', baseline: 'before it' },
};

export interface RowInput {
  candidate: Histogram;
  baseline: Histogram;
  /** before_after: the window before the baseline (the drift guard); else null. */
  drift: Histogram | null;
  /** Ratios compare above this (µs): gap views sit near zero. */
  floorUs: number;
  settings: VerdictSettings;
  /** Significance level of this look. */
  alpha: number;
  sides: SideNames;
}

const ms = (us: number) => Math.round(us) / 1000;
const side = (h: Histogram): SideStats =>
  h.count
    ? { count: h.count, p50: ms(h.quantile(0.5)), p99: ms(h.quantile(0.99)) }
    : { count: 0, p50: null, p99: null };
const x = (r: number) => `×${Number(r.toPrecision(3))}`;
const interval = (r: RatioInterval) =>
  `${x(r.value)} [${x(r.low).slice(1)}, ${x(r.high).slice(1)}]`;
const pText = (p: number) => (p < 1e-4 ? p.toExponential(0) : Number(p.toPrecision(2)).toString());

interface MetricTest {
  name: 'p50' | 'p99';
  ratio: RatioInterval;
  threshold: number;
  pValue: number;
  reached: boolean;
  confirmed: boolean;
}

function metricTests(
  candidate: Histogram,
  baseline: Histogram,
  floorUs: number,
  s: Pick<VerdictSettings, 'p50Ratio' | 'p99Ratio'>,
  alpha: number,
): { tests: [MetricTest, MetricTest]; probSlower: number } | null {
  // Each histogram's buckets read once for the four estimates and two tests.
  const c = countsOf(candidate);
  const b = countsOf(baseline);
  // The quantiles as the rows show them (Histogram.quantile), their spread from the counts.
  const c50 = quantileEstimate(c, 0.5, floorUs, candidate.quantile(0.5));
  const b50 = quantileEstimate(b, 0.5, floorUs, baseline.quantile(0.5));
  const c99 = quantileEstimate(c, 0.99, floorUs, candidate.quantile(0.99));
  const b99 = quantileEstimate(b, 0.99, floorUs, baseline.quantile(0.99));
  if (!c50 || !b50 || !c99 || !b99) return null;
  const mw = mannWhitneyHistograms(c, b);
  const tail = tailTest(c, b);
  const make = (
    name: 'p50' | 'p99',
    ratio: RatioInterval,
    threshold: number,
    pValue: number,
  ): MetricTest => ({
    name,
    ratio,
    threshold,
    pValue,
    reached: ratio.value >= threshold,
    confirmed: ratio.value >= threshold && ratio.low > 1 && pValue < alpha,
  });
  return {
    tests: [
      make('p50', quantileRatio(c50, b50, floorUs), s.p50Ratio, mw.pValue),
      make('p99', quantileRatio(c99, b99, floorUs), s.p99Ratio, tail.pValue),
    ],
    probSlower: mw.probSlower,
  };
}

/** How far a ratio is towards its threshold, in log terms (1 = at the threshold). */
const towards = (t: MetricTest) => Math.log(t.ratio.value) / Math.log(t.threshold);

/**
 * One series' row: fail when p50 or p99 reached its minimum effect, with that
 * ratio's interval above 1 and its test (Mann-Whitney for p50, the tail test for
 * p99) significant; pass when neither reached it; inconclusive with too few calls
 * a side, when a reached effect is not confirmed, or (before_after) when the series
 * was already rising before the deploy.
 */
export function judgeRow(r: RowInput): RowJudgement {
  const { candidate, baseline, settings: s, sides } = r;
  const base = {
    baseline: side(baseline),
    candidate: side(candidate),
    p50Ratio: null,
    p99Ratio: null,
    pValue: null,
    probSlower: null,
    severity: 0,
  };
  const mt = metricTests(candidate, baseline, r.floorUs, s, r.alpha);
  const numbers = mt
    ? {
        p50Ratio: mt.tests[0].ratio,
        p99Ratio: mt.tests[1].ratio,
        probSlower: mt.probSlower,
      }
    : {};
  const few = [
    candidate.count < s.minCount ? `${candidate.count} calls ${sides.candidate}` : '',
    baseline.count < s.minCount ? `${baseline.count} ${sides.baseline}` : '',
  ].filter(Boolean);
  if (few.length || !mt) {
    return {
      ...base,
      ...numbers,
      verdict: 'inconclusive',
      lowTraffic: true,
      reason: `too few calls to judge: ${few.join(', ')} (${s.minCount} needed a side)`,
    };
  }
  const [t50, t99] = mt.tests;
  // The deciding metric: the one further towards its threshold.
  const lead = towards(t99) > towards(t50) ? t99 : t50;
  const severity = Math.max(towards(t50), towards(t99));
  const judged = { ...base, ...numbers, pValue: lead.pValue, severity, lowTraffic: false };
  const confirmed = mt.tests.filter((t) => t.confirmed);
  if (confirmed.length) {
    const rising = r.drift ? driftRise(r.drift, baseline, r.floorUs, s, r.alpha) : null;
    if (rising)
      return {
        ...judged,
        verdict: 'inconclusive',
        reason: `${lead.name} ${x(lead.ratio.value)} ${sides.candidate}, but the series was already rising before the deploy (${rising} over the window before)`,
      };
    const first = confirmed.sort((a, b) => towards(b) - towards(a))[0]!;
    return {
      ...judged,
      pValue: first.pValue,
      verdict: 'fail',
      reason: confirmed
        .map(
          (t) =>
            `${t.name} ${interval(t.ratio)} ≥ ${x(t.threshold)} ${sides.candidate} (p = ${pText(t.pValue)})`,
        )
        .join('; '),
    };
  }
  const reached = mt.tests.filter((t) => t.reached);
  if (reached.length) {
    const t = reached[0]!;
    return {
      ...judged,
      pValue: t.pValue,
      verdict: 'inconclusive',
      reason: `${t.name} ${interval(t.ratio)} reaches ${x(t.threshold)} but the test does not confirm it (p = ${pText(t.pValue)})`,
    };
  }
  return {
    ...judged,
    verdict: 'pass',
    reason: `p50 ${x(t50.ratio.value)}, p99 ${x(t99.ratio.value)} ${sides.candidate}: under ${x(t50.threshold)} / ${x(t99.threshold)}`,
  };
}

/** The baseline against the window before it: rising by half the minimum effect? ("p50 ×1.08") */
function driftRise(
  drift: Histogram,
  baseline: Histogram,
  floorUs: number,
  s: VerdictSettings,
  alpha: number,
): string | null {
  if (drift.count < s.minCount) return null;
  const half = { p50Ratio: 1 + (s.p50Ratio - 1) / 2, p99Ratio: 1 + (s.p99Ratio - 1) / 2 };
  const mt = metricTests(baseline, drift, floorUs, half, alpha);
  const t = mt?.tests.find((t) => t.confirmed);
  return t ? `${t.name} ${x(t.ratio.value)}` : null;
}

export interface MethodChoice {
  method: Method;
  canaryHosts: string[];
  baselineHosts: string[];
  reason: string;
}

/**
 * canary when the marker names hosts that are a strict subset of the hosts of what
 * it deployed (`scopeHosts`: its service's series, else the series its hosts feed);
 * before_after otherwise.
 */
export function chooseMethod(
  markerHosts: readonly string[],
  scopeHosts: readonly string[],
  scopeName: string,
): MethodChoice {
  const marked = new Set(markerHosts);
  const canary = [...new Set(scopeHosts)].filter((h) => marked.has(h)).sort();
  const others = [...new Set(scopeHosts)].filter((h) => !marked.has(h)).sort();
  const before = (why: string): MethodChoice => ({
    method: 'before_after',
    canaryHosts: [],
    baselineHosts: [],
    reason: `${why}: the window after the marker against the window before it`,
  });
  if (!markerHosts.length) return before('the marker names no hosts');
  if (!canary.length) return before(`none of the marker's hosts report ${scopeName}`);
  if (!others.length) return before(`the marker names every host of ${scopeName}`);
  return {
    method: 'canary',
    canaryHosts: canary,
    baselineHosts: others,
    reason: `the marker names ${canary.length} of the ${canary.length + others.length} hosts of ${scopeName}: those against the other ${others.length} over the same minutes`,
  };
}

/** One judged series, its histograms per minute of the judged window. */
export interface VerdictSeriesInput<K> {
  key: K;
  floorUs: number;
  /** Per minute of the judged window (index 0: its first minute). */
  candidate: readonly Histogram[];
  /** canary: per minute, the same minutes on the other hosts; before_after: the window before the marker. */
  baseline: readonly Histogram[] | Histogram;
  /** before_after: the window before the baseline; canary: null. */
  drift: Histogram | null;
}

export interface VerdictRow<K> {
  key: K;
  judgement: RowJudgement;
  /** The row's verdict; `pending` while the verdict is (a row that fails decides it at once). */
  verdict: VerdictOutcome;
}

export interface VerdictInput<K> {
  method: Method;
  series: readonly VerdictSeriesInput<K>[];
  settings: VerdictSettings;
  /** Minutes of the judged window whose data is settled (0 … the window's minutes). */
  settledMinutes: number;
  /** Open regressions whose top suspect is this deploy: each fails the verdict. */
  regressions: readonly { reason: string }[];
  /** For reasons: "checkout GET /cart (server)". */
  label: (key: K) => string;
}

export interface VerdictResult<K> {
  outcome: VerdictOutcome;
  reason: string;
  /** The look that decided (minutes into the window), null while pending or decided by a regression. */
  decidedAtMinutes: number | null;
  /** Failed because an open regression names the deploy (decided when it was detected). */
  byRegression: boolean;
  /** Minutes of the window the rows were judged on. */
  judgedMinutes: number;
  rows: VerdictRow<K>[];
}

const ORDER: Record<VerdictOutcome, number> = { fail: 0, inconclusive: 1, pending: 2, pass: 3 };

/**
 * The verdict over the judged window, looked at after every settled minute from
 * FIRST_LOOK_MINUTES on. A row that fails at a look fails the verdict there
 * (each look tests at alpha / looks, so looking often does not make a fail more
 * likely); pass and inconclusive wait for the window's end; until then, pending.
 * Overall: fail if a row fails or a regression names the deploy; inconclusive if a
 * row is inconclusive for any reason but too few calls, or no row had enough calls;
 * else pass.
 */
export function judgeVerdict<K>(v: VerdictInput<K>): VerdictResult<K> {
  const W = Math.max(1, Math.round(v.settings.windowMs / MIN));
  const first = Math.min(FIRST_LOOK_MINUTES, W);
  const looks = W - first + 1;
  const alpha = v.settings.alpha / looks;
  const settled = Math.max(0, Math.min(W, Math.floor(v.settledMinutes)));
  const sides = SIDE_NAMES[v.method];
  // Each series' window so far, grown a minute per look (never re-merged from the start).
  const sums = v.series.map(() => ({
    minutes: 0,
    candidate: new Histogram(),
    baseline: new Histogram(),
  }));
  const upto = (i: number, k: number) => {
    const s = v.series[i]!;
    const sum = sums[i]!;
    for (; sum.minutes < k; sum.minutes++) {
      const m = s.candidate[sum.minutes];
      if (m) sum.candidate.merge(m);
      if (Array.isArray(s.baseline)) {
        const bm = (s.baseline as Histogram[])[sum.minutes];
        if (bm) sum.baseline.merge(bm);
      }
    }
    return sum;
  };
  const rowsAt = (k: number): VerdictRow<K>[] =>
    v.series.map((s, i) => {
      const sum = upto(i, k);
      const judgement = judgeRow({
        candidate: sum.candidate,
        baseline: Array.isArray(s.baseline) ? sum.baseline : (s.baseline as Histogram),
        drift: s.drift,
        floorUs: s.floorUs,
        settings: v.settings,
        alpha,
        sides,
      });
      return { key: s.key, judgement, verdict: judgement.verdict };
    });
  const sorted = (rows: VerdictRow<K>[]) =>
    rows.sort(
      (a, b) => ORDER[a.verdict] - ORDER[b.verdict] || b.judgement.severity - a.judgement.severity,
    );
  const failReason = (rows: VerdictRow<K>[]) => {
    const worst = rows[0]!;
    const more = rows.filter((r) => r.verdict === 'fail').length - 1;
    return `${v.label(worst.key)}: ${worst.judgement.reason}${more > 0 ? ` (and ${more} more series)` : ''}`;
  };

  let rows: VerdictRow<K>[] = [];
  let decided: number | null = null;
  for (let k = first; k <= settled; k++) {
    rows = rowsAt(k);
    if (k === W || rows.some((r) => r.verdict === 'fail')) {
      decided = k;
      break;
    }
  }
  if (!rows.length && settled > 0) rows = rowsAt(settled);
  sorted(rows);
  const judgedMinutes = decided ?? (rows.length ? settled : 0);
  // Undecided rows are pending; before the first look (or with nothing decided) every row is.
  const shown =
    decided === W
      ? rows
      : decided !== null
        ? pendingRest(rows)
        : rows.map((r) => ({ ...r, verdict: 'pending' as const }));
  if (decided !== null) {
    const out = finalOutcome(rows, decided === W, v, failReason);
    if (out.outcome === 'fail' || (out.outcome !== 'pending' && !v.regressions.length))
      return { ...out, decidedAtMinutes: decided, byRegression: false, judgedMinutes, rows: shown };
  }
  if (v.regressions.length)
    return {
      outcome: 'fail',
      reason: `an open regression names this deploy its top suspect: ${v.regressions[0]!.reason}`,
      decidedAtMinutes: null,
      byRegression: true,
      judgedMinutes,
      rows: shown,
    };
  return {
    outcome: 'pending',
    reason: `judging: ${settled} of ${W} minutes of the window settled${settled < first ? ` (the first look is after ${first})` : ', no series failed yet'}`,
    decidedAtMinutes: null,
    byRegression: false,
    judgedMinutes,
    rows: shown,
  };
}

/** Before the window's end only failing rows are decided; the others are pending. */
function pendingRest<K>(rows: VerdictRow<K>[]): VerdictRow<K>[] {
  return rows.map((r) => (r.verdict === 'fail' ? r : { ...r, verdict: 'pending' }));
}

function finalOutcome<K>(
  rows: VerdictRow<K>[],
  atEnd: boolean,
  v: VerdictInput<K>,
  failReason: (rows: VerdictRow<K>[]) => string,
): { outcome: VerdictOutcome; reason: string } {
  if (rows.some((r) => r.verdict === 'fail')) return { outcome: 'fail', reason: failReason(rows) };
  if (!atEnd) return { outcome: 'pending', reason: '' };
  const judged = rows.filter((r) => !r.judgement.lowTraffic);
  const unsure = judged.find((r) => r.verdict === 'inconclusive');
  if (unsure)
    return {
      outcome: 'inconclusive',
      reason: `${v.label(unsure.key)}: ${unsure.judgement.reason}`,
    };
  if (!judged.length) {
    const r = rows[0];
    return {
      outcome: 'inconclusive',
      reason: r
        ? `no series had enough calls: ${v.label(r.key)}: ${r.judgement.reason}`
        : 'no series this deploy can affect had calls in the window',
    };
  }
  const few = rows.length - judged.length;
  return {
    outcome: 'pass',
    reason: `${judged.length} series within ×${v.settings.p50Ratio} on p50 and ×${v.settings.p99Ratio} on p99${few ? `; ${few} more had too few calls to judge` : ''}`,
  };
}
