/** Levels and ratios as a regression row stores them (ms, rounded), from the detector's µs. */
import type { Level } from './store.ts';

export function level(l: { p50: number; p99: number; count: number }): Level {
  return { p50_ms: roundMs(l.p50 / 1000), p99_ms: roundMs(l.p99 / 1000), count: l.count };
}

export function ratio(before: number, after: number, floorMs: number): number {
  const r = before > 0 ? after / before : (after + floorMs) / (before + floorMs || 1);
  return round(r, 3);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
}

export const round = (x: number, digits: number) => Number(x.toFixed(digits));
export const roundMs = (ms: number) => Number(ms.toPrecision(4));
export const fmtMs = (ms: number) => String(Number(ms.toPrecision(3)));
