/**
 * The words a screen reader gets instead of a canvas: for each line its
 * first, last, lowest and highest value over the window; for a heatmap the
 * calls and where most of them fell. Pure; unit-tested.
 */
import { formatInstant } from '../../lib/time.ts';
import { formatCount, formatLatencyMs } from '../../lib/format.ts';
import type { HeatmapFrame } from './heatmapData.ts';

export function summarizeLines(
  xSec: readonly number[],
  lines: ReadonlyArray<{ label: string; values: ReadonlyArray<number | null> }>,
  format: (v: number) => string = formatLatencyMs,
): string {
  if (!xSec.length) return 'No data in this range.';
  const parts = [
    `From ${formatInstant(xSec[0]! * 1000)} to ${formatInstant(xSec[xSec.length - 1]! * 1000)}.`,
  ];
  for (const l of lines) {
    const present = l.values.filter((v): v is number => v !== null && Number.isFinite(v));
    if (!present.length) {
      parts.push(`${l.label}: no data.`);
      continue;
    }
    parts.push(
      `${l.label}: first ${format(present[0]!)}, last ${format(present[present.length - 1]!)}, lowest ${format(Math.min(...present))}, highest ${format(Math.max(...present))}.`,
    );
  }
  return parts.join(' ');
}

export function summarizeHeatmap(f: HeatmapFrame): string {
  if (!f.x.length || !f.total) return 'No calls in this range.';
  const rows = f.rows.length;
  const perRow = new Array<number>(rows).fill(0);
  for (let c = 0; c < f.x.length; c++)
    for (let r = 0; r < rows; r++) perRow[r]! += f.counts[c * rows + r] ?? 0;
  let best = 0;
  for (let r = 1; r < rows; r++) if (perRow[r]! > perRow[best]!) best = r;
  const row = f.rows[best]!;
  return (
    `${formatCount(f.total)} calls from ${formatInstant(f.x[0]! * 1000)} to ${formatInstant(f.x[f.x.length - 1]! * 1000)}; ` +
    `most (${formatCount(perRow[best]!)}) took ${formatLatencyMs(row.loMs)} to ${formatLatencyMs(row.hiMs)}.`
  );
}
