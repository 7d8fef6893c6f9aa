import type { Hint, HintId, Op, View } from '@onset/contract';
import { HINT_ATTRS } from '@onset/contract';
import type { EvidenceSample } from './lifts.ts';
import { quantile, sortedCopy, spearman } from './stats.ts';

export interface HintInput {
  op: Op;
  view: View;
  before: readonly EvidenceSample[];
  after: readonly EvidenceSample[];
}

/** Below this many calls on a side, no hint: a step size needs a median you can trust. */
export const MIN_HINT_SAMPLES = 20;
/** A rank correlation this strong between duration and a recorded attribute supports a mechanism. */
export const MIN_CORRELATION = 0.5;

const TITLES: Record<HintId, string> = {
  'tcp-delayed-ack': 'Nagle’s algorithm waiting for a delayed ACK',
  'tcp-min-rto': 'TCP retransmissions at the minimum retransmission timeout',
  'tcp-syn-retry': 'TCP connection setup retried (SYN retransmit)',
  'dns-timeout': 'DNS resolver timeout',
  'spawn-fd-count': 'Spawn time grows with the parent’s open file descriptors',
  'fork-parent-rss': 'Fork time grows with the parent’s resident memory',
  'unmount-dirty-bytes': 'Unmount waits for dirty pages to be written back',
  'fsync-per-operation': 'More fsyncs per operation',
};

interface Step {
  b50: number;
  b90: number;
  b99: number;
  a50: number;
  a90: number;
  a99: number;
  d50: number;
  d90: number;
  d99: number;
}

function step(before: readonly number[], after: readonly number[]): Step {
  const b = sortedCopy(before);
  const a = sortedCopy(after);
  const s = {
    b50: quantile(b, 0.5),
    b90: quantile(b, 0.9),
    b99: quantile(b, 0.99),
    a50: quantile(a, 0.5),
    a90: quantile(a, 0.9),
    a99: quantile(a, 0.99),
  };
  return { ...s, d50: s.a50 - s.b50, d90: s.a90 - s.b90, d99: s.a99 - s.b99 };
}

const ms = (x: number) =>
  Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2);
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${ms(Math.abs(x))} ms`;
const clamp01 = (x: number) => Math.max(0, Math.min(1, Math.round(x * 100) / 100));
const hint = (id: HintId, confidence: number, detail: string): Hint => ({
  id,
  title: TITLES[id],
  detail,
  confidence: clamp01(confidence),
});

/**
 * Whether the callee saw the step too. true: the caller-side step is not in
 * the callee's own duration (or the view is the gap); false: the callee slowed
 * down by most of it; null: no paired callee spans to tell.
 */
function callerOnly(input: HintInput, s: Step): { verdict: boolean | null; text: string } {
  if (input.view === 'gap')
    return { verdict: true, text: 'the step is in the gap (caller minus callee)' };
  const paired = (xs: readonly EvidenceSample[]) =>
    xs.filter((x) => x.calleeMs !== undefined).map((x) => x.calleeMs!);
  const cb = paired(input.before);
  const ca = paired(input.after);
  if (cb.length < MIN_HINT_SAMPLES || ca.length < MIN_HINT_SAMPLES)
    return { verdict: null, text: 'no paired callee spans to check whether the callee saw it' };
  const cd = quantile(sortedCopy(ca), 0.5) - quantile(sortedCopy(cb), 0.5);
  const only = Math.abs(cd) <= 0.1 * Math.abs(s.d50) + 1;
  return {
    verdict: only,
    text: only
      ? `the callee’s own median moved only ${signed(cd)} (caller-only)`
      : `the callee’s own median moved ${signed(cd)} too`,
  };
}

/** A constant added to every call: the step is the same at p50 and p90. */
const isFlat = (s: Step) => Math.abs(s.d90 - s.d50) <= Math.max(4, 0.2 * Math.abs(s.d50));

/** Network waits of a fixed size, seen only by the caller. */
function networkHints(input: HintInput, s: Step, out: Hint[]): void {
  if (input.op !== 'request' || (input.view !== 'client' && input.view !== 'gap')) return;
  const co = callerOnly(input, s);
  if (co.verdict === false) return;
  const flat = isFlat(s);
  const shape = `p50 ${signed(s.d50)}, p90 ${signed(s.d90)}, p99 ${signed(s.d99)}`;
  const viewBonus = co.verdict ? 0.2 : 0;

  const ackTol = 8;
  if (Math.abs(s.d50 - 40) <= ackTol && flat) {
    out.push(
      hint(
        'tcp-delayed-ack',
        0.5 + 0.2 + viewBonus + 0.05 * (1 - Math.abs(s.d50 - 40) / ackTol),
        `Every call got slower by the same ≈40 ms (${shape}; checked: 40 ± ${ackTol} ms, flat across percentiles), and ${co.text}. ` +
          'That is the signature of Nagle’s algorithm holding a small write until the peer’s delayed ACK (40 ms on Linux). ' +
          'Set TCP_NODELAY on the socket, or send request head and body in one write (writev).',
      ),
    );
  }
  if (Math.abs(s.d50) < ackTol) ackOnShare(input, co, viewBonus, out);
  const rto = (target: number, tol: number, id: HintId, what: string) => {
    const atMedian = Math.abs(s.d50 - target) <= tol;
    const atTail = Math.abs(s.d99 - target) <= tol;
    if (!atMedian && !atTail) return;
    const d = atMedian ? s.d50 : s.d99;
    out.push(
      hint(
        id,
        0.45 + viewBonus + (atMedian && flat ? 0.15 : 0) + 0.1 * (1 - Math.abs(d - target) / tol),
        `The ${atMedian ? 'median' : 'p99'} step is ${signed(d)} (${shape}; checked: ${target} ± ${tol} ms), and ${co.text}. ${what}`,
      ),
    );
  };
  rto(
    200,
    40,
    'tcp-min-rto',
    'A lost segment waits for the minimum retransmission timeout (200 ms on Linux): look for packet loss or a full queue on the path.',
  );
  rto(
    1000,
    150,
    'tcp-syn-retry',
    'A lost SYN is retried after 1 s (3 s on older kernels): look for a full listen backlog or SYN drops on the callee.',
  );
  rto(
    3000,
    300,
    'tcp-syn-retry',
    'A lost SYN is retried after 3 s on older kernels (1 s on newer): look for a full listen backlog or SYN drops.',
  );
  rto(
    5000,
    500,
    'dns-timeout',
    'A resolver query timed out after the default 5 s and was retried: check the resolvers in resolv.conf (options timeout, rotate) or cache lookups.',
  );
}

/** The caller-side wait of one call: the gap view's own value, else the caller's time beyond the callee's (or beyond the before median). */
const callerWait = (input: HintInput, x: EvidenceSample, b50: number) =>
  input.view === 'gap' ? x.ms : x.calleeMs !== undefined ? x.ms - x.calleeMs : x.ms - b50;
/** A delayed-ACK wait: the 40 ms timer, up to a 4 ms tick late, plus a few ms of the held write. */
const ACK_WAIT: readonly [number, number] = [36, 52];
/** The after side's share of such waits must exceed the before's by this much (and be at least twice it). */
const ACK_SHARE_GAIN = 0.03;

/**
 * Nagle and a delayed ACK on a share of calls (the median unmoved): only the
 * calls whose response was split while the caller's ACK was delayed wait the
 * 40 ms timer, so the p99 settles onto a band (a `floor` regression) while
 * p50 stays. Seen as a share of calls whose caller-side wait is 36–52 ms,
 * grown by at least ACK_SHARE_GAIN and at least doubled.
 */
function ackOnShare(
  input: HintInput,
  co: { verdict: boolean | null; text: string },
  viewBonus: number,
  out: Hint[],
): void {
  const b50 = quantile(sortedCopy(input.before.map((x) => x.ms)), 0.5);
  const share = (xs: readonly EvidenceSample[]) => {
    let k = 0;
    for (const x of xs) {
      const w = callerWait(input, x, b50);
      if (w >= ACK_WAIT[0] && w <= ACK_WAIT[1]) k++;
    }
    return { k, share: k / xs.length };
  };
  const b = share(input.before);
  const a = share(input.after);
  if (a.k < 5 || a.share - b.share < ACK_SHARE_GAIN || a.share < 2 * b.share) return;
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  out.push(
    hint(
      'tcp-delayed-ack',
      0.45 + viewBonus + 0.1 * Math.min(1, (a.share - b.share) / 0.1),
      `A share of calls now waits ≈40 ms more while the median stayed: ${pct(a.share)} of calls after the onset waited ${ACK_WAIT[0]}–${ACK_WAIT[1]} ms on the caller’s side (${pct(b.share)} before; checked: the caller’s time beyond the callee’s), and ${co.text}. ` +
        'That is Nagle’s algorithm holding the second write of a response (head and body written separately) until the caller’s delayed ACK (40 ms on Linux), for the calls whose ACK was delayed: the p99 settles onto that wait. ' +
        'Set TCP_NODELAY on the socket, or send head and body in one write (writev).',
    ),
  );
}

/** Rank correlation between duration and a numeric attribute over both sides, with the attribute's medians. */
function correlate(input: HintInput, value: (s: EvidenceSample) => number | undefined) {
  const xs: number[] = [];
  const ys: number[] = [];
  const side = (samples: readonly EvidenceSample[]) => {
    const vals: number[] = [];
    for (const s of samples) {
      const v = value(s);
      if (v === undefined || !Number.isFinite(v)) continue;
      xs.push(v);
      ys.push(s.ms);
      vals.push(v);
    }
    return vals;
  };
  const vb = side(input.before);
  const va = side(input.after);
  const total = input.before.length + input.after.length;
  if (xs.length < 2 * MIN_HINT_SAMPLES || xs.length < total / 2) return null;
  const rho = spearman(xs, ys);
  if (!(rho >= MIN_CORRELATION)) return null;
  return {
    rho,
    n: xs.length,
    medBefore: vb.length ? quantile(sortedCopy(vb), 0.5) : NaN,
    medAfter: va.length ? quantile(sortedCopy(va), 0.5) : NaN,
  };
}

const num = (s: EvidenceSample, key: string): number | undefined => {
  const v = s.attrs[key];
  return typeof v === 'number'
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : undefined;
};
const bytes = (b: number) =>
  !Number.isFinite(b)
    ? '?'
    : b >= 2 ** 30
      ? `${(b / 2 ** 30).toFixed(1)} GiB`
      : b >= 2 ** 20
        ? `${(b / 2 ** 20).toFixed(0)} MiB`
        : `${(b / 1024).toFixed(0)} KiB`;
const count = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '?');
/** Confidence from the correlation, higher when the attribute itself moved with the step. */
const corrConfidence = (rho: number, moved: boolean) => 0.35 + 0.5 * rho + (moved ? 0.1 : 0);

function correlationHints(input: HintInput, s: Step, out: Hint[]): void {
  const steps = `median ${ms(s.b50)} → ${ms(s.a50)} ms`;
  if (input.op === 'spawn') {
    const fds = correlate(input, (x) => num(x, HINT_ATTRS.parentOpenFds));
    if (fds) {
      const moved = fds.medAfter >= 2 * fds.medBefore;
      out.push(
        hint(
          'spawn-fd-count',
          corrConfidence(fds.rho, moved),
          `Spawn time follows the parent’s open file descriptors (${HINT_ATTRS.parentOpenFds}): Spearman ρ = ${fds.rho.toFixed(2)} over ${fds.n} spawns; ` +
            `median open fds ${count(fds.medBefore)} → ${count(fds.medAfter)}, ${steps}. ` +
            'The child closes descriptors one by one before exec (per-fd close-on-exec or a close loop up to the fd limit): use close_range(2) or posix_spawn with fewer inherited fds.',
        ),
      );
    }
    const rss = correlate(input, (x) => num(x, HINT_ATTRS.parentRssBytes));
    if (rss) {
      const methods = new Set(
        input.after.map((x) => x.attrs[HINT_ATTRS.spawnMethod]).filter((v) => v !== undefined),
      );
      const forks = methods.has('fork');
      out.push(
        hint(
          'fork-parent-rss',
          corrConfidence(rss.rho, rss.medAfter >= 2 * rss.medBefore) + (forks ? 0.05 : 0),
          `Spawn time follows the parent’s resident memory (${HINT_ATTRS.parentRssBytes}): Spearman ρ = ${rss.rho.toFixed(2)} over ${rss.n} spawns; ` +
            `median RSS ${bytes(rss.medBefore)} → ${bytes(rss.medAfter)}, ${steps}${forks ? '; spawns after the onset use fork' : ''}. ` +
            'fork() copies the parent’s page tables: use vfork or posix_spawn.',
        ),
      );
    }
  }
  if (input.op === 'unmount') {
    const dirty = (x: EvidenceSample) => {
      const d = num(x, HINT_ATTRS.dirtyBytes);
      const w = num(x, HINT_ATTRS.writebackBytes);
      return d === undefined && w === undefined ? undefined : (d ?? 0) + (w ?? 0);
    };
    const c = correlate(input, dirty);
    if (c)
      out.push(
        hint(
          'unmount-dirty-bytes',
          corrConfidence(c.rho, c.medAfter >= 2 * c.medBefore),
          `Unmount time follows the dirty + writeback bytes at unmount (${HINT_ATTRS.dirtyBytes} + ${HINT_ATTRS.writebackBytes}): Spearman ρ = ${c.rho.toFixed(2)} over ${c.n} unmounts; ` +
            `median ${bytes(c.medBefore)} → ${bytes(c.medAfter)}, ${steps}. The unmount syncs the filesystem first: write back earlier (syncfs before unmount, lower dirty ratios) or avoid the sync.`,
        ),
      );
  }
  if (input.op === 'fsync') fsyncHints(input, s, steps, out);
}

const median = (xs: number[]) => (xs.length ? quantile(sortedCopy(xs), 0.5) : NaN);
/** An fsync count multiplied by at least this across the onset is the mechanism, not a correlate. */
const MIN_FSYNC_COUNT_FACTOR = 2;

/**
 * fsync-per-operation, best evidence first: the operation's fsync count (the agent's
 * `fsync-burst` spans) multiplied across the onset; else duration follows the count; else,
 * without counts, a whole-number duration ratio.
 */
function fsyncHints(input: HintInput, s: Step, steps: string, out: Hint[]): void {
  const countsOf = (side: readonly EvidenceSample[]) =>
    side
      .map((x) => num(x, HINT_ATTRS.fsyncCount))
      .filter((v): v is number => v !== undefined && v > 0);
  const cb = countsOf(input.before);
  const ca = countsOf(input.after);
  const counted =
    cb.length >= MIN_HINT_SAMPLES &&
    ca.length >= MIN_HINT_SAMPLES &&
    cb.length >= input.before.length / 2 &&
    ca.length >= input.after.length / 2;
  if (counted) {
    const mb = median(cb);
    const ma = median(ca);
    const factor = ma / mb;
    if (factor >= MIN_FSYNC_COUNT_FACTOR && s.d50 > 0) {
      // Time per fsync from the operation's own sum, when recorded.
      const perCall = (side: readonly EvidenceSample[]) =>
        median(
          side
            .map((x) => {
              const t = num(x, HINT_ATTRS.fsyncTotalNs);
              const c = num(x, HINT_ATTRS.fsyncCount);
              return t !== undefined && c ? t / c / 1e6 : undefined;
            })
            .filter((v): v is number => v !== undefined && Number.isFinite(v)),
        );
      const pb = perCall(input.before);
      const pa = perCall(input.after);
      const perFsync =
        Number.isFinite(pb) && Number.isFinite(pa)
          ? ` Time per fsync (${HINT_ATTRS.fsyncTotalNs} / count): median ${ms(pb)} → ${ms(pa)} ms${
              pa <= pb * 1.1 ? ', no slower: the per-call view does not show this' : ''
            }.`
          : '';
      const c = correlate(input, (x) => num(x, HINT_ATTRS.fsyncCount));
      const durationGrew = s.a50 >= 1.5 * s.b50;
      out.push(
        hint(
          'fsync-per-operation',
          0.8 + (durationGrew ? 0.1 : 0) + (c ? 0.05 : 0),
          `Each operation now issues ×${factor >= 10 ? factor.toFixed(0) : factor.toFixed(1)} as many fsyncs (${HINT_ATTRS.fsyncCount}: median ${count(mb)} → ${count(ma)} per operation over ${cb.length} + ${ca.length} operations; checked: ×${MIN_FSYNC_COUNT_FACTOR} or more). ` +
            `Time per operation: ${steps}.${perFsync}${c ? ` Duration follows the count (Spearman ρ = ${c.rho.toFixed(2)}).` : ''} ` +
            'Something now fsyncs more often per operation (e.g. the directory after every unlink instead of once per batch): batch them into one fsync.',
        ),
      );
      return;
    }
  }
  if (rateHint(input, s, out)) return;
  const c = correlate(input, (x) => num(x, HINT_ATTRS.fsyncCount));
  if (c) {
    out.push(
      hint(
        'fsync-per-operation',
        corrConfidence(c.rho, c.medAfter >= 2 * c.medBefore),
        `Duration follows the fsyncs per operation (${HINT_ATTRS.fsyncCount}): Spearman ρ = ${c.rho.toFixed(2)} over ${c.n} operations; median ${count(c.medBefore)} → ${count(c.medAfter)} fsyncs, ${steps}. ` +
          'Something now fsyncs more often per operation (e.g. the directory after every unlink): batch them into one fsync.',
      ),
    );
    return;
  }
  // Counts (or rates) recorded and unchanged: slower fsyncs, not more of them.
  if (counted || input.before.some((x) => num(x, HINT_ATTRS.fsyncCallsPerS) !== undefined)) return;
  // Without the count: a whole-number multiple, the same at p50 and p90, is what repeating the same fsync looks like.
  const r50 = s.a50 / s.b50;
  const r90 = s.a90 / s.b90;
  const k = Math.round(r50);
  if (k >= 2 && Math.abs(r50 - k) <= 0.1 * k && Math.abs(r90 - r50) <= 0.15 * r50)
    out.push(
      hint(
        'fsync-per-operation',
        0.4,
        `Duration went ×${r50.toFixed(2)} at p50 and ×${r90.toFixed(2)} at p90 (${steps}; checked: a whole multiple within 10%, the same at both): consistent with ${k}× as many fsyncs per operation. ` +
          `Record ${HINT_ATTRS.fsyncCount} on fsync spans to confirm.`,
      ),
    );
}

/**
 * On a rate series (`fsync-rate <process>`: time in fsync per second), calls per second that
 * multiplied while each call got no slower point at more fsyncs; a rate cannot tell more
 * operations from more fsyncs per operation, so the confidence stays moderate.
 */
function rateHint(input: HintInput, s: Step, out: Hint[]): boolean {
  const rates = (side: readonly EvidenceSample[]) =>
    side
      .map((x) => num(x, HINT_ATTRS.fsyncCallsPerS))
      .filter((v): v is number => v !== undefined && v > 0);
  const rb = rates(input.before);
  const ra = rates(input.after);
  if (rb.length < MIN_HINT_SAMPLES || ra.length < MIN_HINT_SAMPLES) return false;
  const factor = median(ra) / median(rb);
  if (!(factor >= MIN_FSYNC_COUNT_FACTOR) || s.d50 <= 0) return false;
  const perCall = (side: readonly EvidenceSample[]) =>
    median(
      side
        .map((x) => {
          const t = num(x, HINT_ATTRS.fsyncTotalNs);
          const n = num(x, HINT_ATTRS.fsyncCalls);
          return t !== undefined && n ? t / n / 1e6 : undefined;
        })
        .filter((v): v is number => v !== undefined && Number.isFinite(v)),
    );
  const pb = perCall(input.before);
  const pa = perCall(input.after);
  const perFsync =
    Number.isFinite(pb) && Number.isFinite(pa)
      ? ` Time per fsync (${HINT_ATTRS.fsyncTotalNs} / ${HINT_ATTRS.fsyncCalls}): median ${ms(pb)} → ${ms(pa)} ms.`
      : '';
  const cheaper = Number.isFinite(pb) && Number.isFinite(pa) && pa <= pb * 1.1;
  out.push(
    hint(
      'fsync-per-operation',
      cheaper ? 0.6 : 0.5,
      `fsync calls per second went ×${factor >= 10 ? factor.toFixed(0) : factor.toFixed(1)} (${HINT_ATTRS.fsyncCallsPerS}: median ${ms(median(rb))} → ${ms(median(ra))}; checked: ×${MIN_FSYNC_COUNT_FACTOR} or more) and the time in fsync per second went median ${ms(s.b50)} → ${ms(s.a50)} ms.${perFsync} ` +
        'More fsyncs, not slower ones: either more operations or more fsyncs per operation. The program’s fsync-burst series (one span per operation, with onset.fsync.count) tells which.',
    ),
  );
  return true;
}

/** The known mechanisms the data supports, most confident first. Each hint says what it checked. */
export function detectHints(input: HintInput): Hint[] {
  if (input.before.length < MIN_HINT_SAMPLES || input.after.length < MIN_HINT_SAMPLES) return [];
  const s = step(
    input.before.map((x) => x.ms),
    input.after.map((x) => x.ms),
  );
  const out: Hint[] = [];
  networkHints(input, s, out);
  correlationHints(input, s, out);
  // One hint per id (the SYN retry has two sizes): keep the most confident.
  const best = new Map<HintId, Hint>();
  for (const h of out)
    if (!best.has(h.id) || best.get(h.id)!.confidence < h.confidence) best.set(h.id, h);
  return [...best.values()].sort((a, b) => b.confidence - a.confidence);
}

/** A standing share of delayed-ACK waits: at least this many calls, and this share of the window's. */
const STANDING_ACK_MIN_CALLS = 5;
const STANDING_ACK_MIN_SHARE = 0.03;
/**
 * The band must stand out: at least this many times the calls of each neighbouring band of the
 * same width (the caller's other stalls are spread out; the 40 ms timer is a line).
 */
const STANDING_ACK_BAND_RATIO = 3;

export interface StandingInput {
  op: Op;
  view: View;
  /** The window's calls (no onset: what is there, change or not). */
  samples: readonly EvidenceSample[];
}

/**
 * Known mechanisms present in a window whether or not anything changed (issue 34: the JDK
 * server's Nagle tail, a quarter of calls +36–52 ms in the gap from the first minute, was drawn
 * but never named because it never changed). Today one: Nagle's algorithm and a delayed ACK on
 * a share of an edge's calls, seen as a band of caller-side waits of 36–52 ms (the gap view's
 * own value, else the caller's time beyond the callee's) holding at least 3 % and 5 of the calls,
 * with the median call outside it, and at least 3× the calls of either neighbouring band.
 */
export function standingHints(input: StandingInput): Hint[] {
  if (input.op !== 'request' || (input.view !== 'client' && input.view !== 'gap')) return [];
  if (input.samples.length < MIN_HINT_SAMPLES) return [];
  const waits: number[] = [];
  for (const x of input.samples) {
    if (input.view === 'gap') waits.push(x.ms);
    else if (x.calleeMs !== undefined) waits.push(x.ms - x.calleeMs);
  }
  if (waits.length < MIN_HINT_SAMPLES) return [];
  const [lo, hi] = ACK_WAIT;
  const width = hi - lo;
  const within = (a: number, b: number) => waits.filter((w) => w >= a && w <= b).length;
  const k = within(lo, hi);
  const below = within(lo - width, lo - 1e-9);
  const above = within(hi + 1e-9, hi + width);
  const share = k / waits.length;
  const median = quantile(sortedCopy(waits), 0.5);
  if (k < STANDING_ACK_MIN_CALLS || share < STANDING_ACK_MIN_SHARE || median >= lo) return [];
  if (k < STANDING_ACK_BAND_RATIO * Math.max(below, above, 1)) return [];
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  const where =
    input.view === 'gap'
      ? 'in the gap (caller minus callee)'
      : 'on the caller’s side (its time beyond the callee’s)';
  return [
    hint(
      'tcp-delayed-ack',
      0.45 + 0.2 + 0.1 * Math.min(1, share / 0.1),
      `${pct(share)} of calls (${k} of ${waits.length}) wait ${lo}–${hi} ms ${where} while the median call waits ${ms(median)} ms; ` +
        `checked: that band holds ${k} calls, its neighbours ${below} (${lo - width}–${lo} ms) and ${above} (${hi}–${hi + width} ms). ` +
        'Present throughout the window, not a change. That is Nagle’s algorithm holding the second write of a response (head and body written separately) until the caller’s delayed ACK (40 ms on Linux), for the calls whose ACK was delayed. ' +
        'Set TCP_NODELAY on the server’s sockets (a JDK com.sun.net.httpserver: -Dsun.net.httpserver.nodelay=true), or send head and body in one write.',
    ),
  ];
}
