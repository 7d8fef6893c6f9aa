import { parseDuration } from '@onset/core';
import { badRequest } from './errors.ts';

/** RFC 3339, epoch milliseconds, "now", or "now-6h" style relative times. */
export function parseTime(text: string, now: number, field: string): number {
  const t = text.trim();
  if (t === 'now') return now;
  const rel = /^now-(.+)$/.exec(t);
  if (rel) {
    try {
      return now - parseDuration(rel[1]!);
    } catch {
      throw badRequest(`${field}: invalid relative time "${text}"`);
    }
  }
  if (/^\d{10,14}$/.test(t)) return Number(t);
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) throw badRequest(`${field}: "${text}" is not an RFC 3339 time`);
  return ms;
}
