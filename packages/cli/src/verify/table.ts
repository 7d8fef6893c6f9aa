/** A verdict as text for a CI log: a headline, how it was judged, and one row per judged series. */
import type { Verdict, VerdictRatio, VerdictSeries, VerdictSide } from '@onset/contract';

const ms = (v: number | null) =>
  v === null ? '–' : v >= 1000 ? `${(v / 1000).toPrecision(3)}s` : `${Number(v.toPrecision(3))}ms`;

const side = (s: VerdictSide) => `${ms(s.p50)} / ${ms(s.p99)} (${s.count})`;

const ratio = (r: VerdictRatio) =>
  r.value === null
    ? '–'
    : `×${r.value.toFixed(2)}${r.low !== null && r.high !== null ? ` [${r.low.toFixed(2)}, ${r.high.toFixed(2)}]` : ''}`;

const pValue = (p: number | null) =>
  p === null ? '–' : p < 1e-4 ? p.toExponential(0) : p.toPrecision(2);

function seriesName(s: VerdictSeries): string {
  const edge = s.peer ? ` → ${s.peer}` : '';
  return `${s.service}${edge} ${s.name} (${s.op}, ${s.view})`;
}

const instant = (iso: string) => iso.replace(/\.\d+Z$/, 'Z');

/** Columns padded to their widest cell; the last column is not padded. */
function columns(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...r[i]!].length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i]! - [...c].length)))
      .join('  ')
      .trimEnd(),
  );
}

export function verdictTable(v: Verdict): string[] {
  const lines = [`deploy ${v.deploy_id}: ${v.verdict.toUpperCase()}: ${v.reason}`];
  const w = v.windows;
  lines.push(
    `method ${v.method}${v.method_reason ? `: ${v.method_reason}` : ''}`,
    `baseline ${instant(w.baseline.from)} – ${instant(w.baseline.to)}, candidate ${instant(w.candidate.from)} – ${instant(w.candidate.to)}` +
      (w.drift_guard
        ? `, drift guard ${instant(w.drift_guard.from)} – ${instant(w.drift_guard.to)}`
        : ''),
    `fails at p50 ×${v.thresholds.p50_ratio} or p99 ×${v.thresholds.p99_ratio}, at least ${v.thresholds.min_count} calls a side, alpha ${v.thresholds.alpha}` +
      (v.decided_at ? `; decided ${instant(v.decided_at)}` : '; not decided yet'),
  );
  for (const r of v.regressions) lines.push(`regression ${r.id}: ${r.reason}`);
  if (!v.series.length) {
    lines.push('no series judged');
    return lines;
  }
  lines.push('');
  lines.push(
    ...columns([
      [
        'VERDICT',
        'SERIES',
        'BASELINE p50 / p99 (calls)',
        'CANDIDATE p50 / p99 (calls)',
        'p50 RATIO',
        'p99 RATIO',
        'p',
        'REASON',
      ],
      ...v.series.map((s) => [
        s.verdict,
        seriesName(s),
        side(s.baseline),
        side(s.candidate),
        ratio(s.p50_ratio),
        ratio(s.p99_ratio),
        pValue(s.p_value),
        s.reason,
      ]),
    ]),
  );
  if (v.series_total > v.series.length)
    lines.push(`… and ${v.series_total - v.series.length} more series`);
  return lines;
}
