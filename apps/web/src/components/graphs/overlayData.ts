/**
 * The same window a day or a week earlier, drawn over a latency chart: the earlier answer's
 * lines shifted forward by the offset, dashed and thinner, on the current frame's time axis
 * (the union of both answers' steps; the server's steps are epoch-aligned, so a day or a week
 * later lands on the current steps).
 */
import type { LatencyFrame } from './latencyFrame.ts';

export const OVERLAYS = [
  { value: '1d', label: 'a day earlier', shiftMs: 86_400_000 },
  { value: '1w', label: 'a week earlier', shiftMs: 7 * 86_400_000 },
] as const;
export type OverlayValue = (typeof OVERLAYS)[number]['value'];

export function overlayOf(text: string | null | undefined) {
  return OVERLAYS.find((o) => o.value === text);
}

/** A time of the URL's grammar moved `shiftMs` earlier: "now-6h" → "now-1800m", RFC 3339 or epoch → epoch ms. */
export function shiftTimeText(
  text: string,
  shiftMs: number,
  now: number,
  parse: (t: string, now: number) => number,
): string {
  const t = text.trim();
  const rel = t === 'now' ? 0 : /^now-/.test(t) ? now - parse(t, now) : null;
  if (rel !== null) {
    const total = rel + shiftMs;
    return total % 60_000 === 0 ? `now-${total / 60_000}m` : `now-${Math.round(total)}ms`;
  }
  return String(parse(t, now) - shiftMs);
}

/** `frame` with `earlier`'s lines shifted forward by `shiftMs` and labelled "<line> <label>". */
export function withOverlay(
  frame: LatencyFrame,
  earlier: LatencyFrame,
  shiftMs: number,
  label: string,
): LatencyFrame {
  const shiftS = shiftMs / 1000;
  const moved = earlier.x.map((x) => x + shiftS);
  const x = [...new Set([...frame.x, ...moved])].sort((a, b) => a - b);
  const at = new Map<number, number>();
  x.forEach((t, i) => at.set(t, i));
  const place = (from: readonly number[], values: ReadonlyArray<number | null>) => {
    const out = new Array<number | null>(x.length).fill(null);
    from.forEach((t, i) => (out[at.get(t)!] = values[i] ?? null));
    return out;
  };
  const same = x.length === frame.x.length;
  return {
    ...frame,
    x,
    count: frame.count && !same ? place(frame.x, frame.count) : frame.count,
    lines: [
      ...(same
        ? frame.lines
        : frame.lines.map((l) => ({ ...l, values: place(frame.x, l.values) }))),
      ...earlier.lines.map((l) => ({
        ...l,
        key: `${l.key}@${shiftMs}`,
        label: `${l.label} ${label}`,
        dash: true,
        width: 1,
        values: place(moved, l.values),
      })),
    ],
  };
}
