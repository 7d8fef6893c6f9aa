/**
 * Parse a Server-Timing response header (W3C Server Timing):
 *   db;dur=53, app;dur=47.2, cache;desc="Cache Read";dur=23.2
 */
import type { ServerTimingEntry } from '../events.ts';

/** Split on `sep` outside double quotes. */
function splitOutsideQuotes(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\' && quoted && i + 1 < s.length) {
      cur += ch + s[++i];
      continue;
    }
    if (ch === '"') quoted = !quoted;
    if (ch === sep && !quoted) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts;
}

function unquote(v: string): string {
  const t = v.trim();
  return t.startsWith('"') && t.endsWith('"') && t.length >= 2
    ? t.slice(1, -1).replace(/\\(.)/g, '$1')
    : t;
}

export function parseServerTiming(header: string | null | undefined): ServerTimingEntry[] {
  if (!header) return [];
  const out: ServerTimingEntry[] = [];
  for (const metric of splitOutsideQuotes(header, ',')) {
    const [name, ...params] = splitOutsideQuotes(metric, ';').map((p) => p.trim());
    if (!name || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) continue;
    const entry: ServerTimingEntry = { name };
    for (const p of params) {
      const eq = p.indexOf('=');
      const key = (eq < 0 ? p : p.slice(0, eq)).trim().toLowerCase();
      const value = eq < 0 ? '' : unquote(p.slice(eq + 1));
      // The spec keeps the first occurrence of each parameter.
      if (
        key === 'dur' &&
        entry.durMs === undefined &&
        Number.isFinite(Number(value)) &&
        value !== ''
      )
        entry.durMs = Number(value);
      if (key === 'desc' && entry.desc === undefined) entry.desc = value;
    }
    out.push(entry);
  }
  return out;
}
