import { RFC3339_PATTERN, type DeployKind } from '@onset/contract';
import type { MarkerChange } from '@onset/core';
import { badRequest } from '../http/errors.ts';

/** How far `at` may be from now: a marker a year off is a unit mistake, not a deploy. */
const MAX_AT_DISTANCE_MS = 366 * 86_400_000;

/** The POST body after schema validation (strings are length-capped by the schema). */
export interface MarkerInput {
  service?: string | null;
  environment?: string | null;
  hosts?: string[] | null;
  kind: DeployKind;
  component?: string | null;
  from_version?: string | null;
  to_version?: string | null;
  commit?: string | null;
  url?: string | null;
  description?: string | null;
  at?: string | null;
  external_id?: string | null;
}

/** What a marker says changed: the same fields in storage, the API and attribution (declared once, in core). */
export type { MarkerChange };

/** A marker ready to store. */
export interface NewMarker extends MarkerChange {
  environment: string | null;
  kind: DeployKind;
  at: Date;
  external_id: string | null;
}

/** Blank means absent: CI templates often expand a missing variable to "". */
function text(v: string | null | undefined): string | null {
  if (v === undefined || v === null) return null;
  const t = v.trim();
  return t === '' ? null : t;
}

/** The contract's pattern, so the document and this check agree. */
const RFC3339 = new RegExp(RFC3339_PATTERN);

/** RFC 3339 with an explicit offset, within a year of now. */
export function parseMarkerTime(raw: string, nowMs: number, field = 'at'): Date {
  const t = raw.trim();
  const ms = RFC3339.test(t) ? Date.parse(t.replace(' ', 'T')) : NaN;
  if (Number.isNaN(ms))
    throw badRequest(
      `${field}: "${t.slice(0, 64)}" is not an RFC 3339 time with a timezone, e.g. 2026-11-20T10:42:00Z`,
    );
  if (Math.abs(ms - nowMs) > MAX_AT_DISTANCE_MS)
    throw badRequest(
      `${field}: ${new Date(ms).toISOString()} is more than a year away from now; check the clock or the units`,
    );
  return new Date(ms);
}

/** Only http(s) links: the UI renders `url` as a link, and `javascript:` must never get there. */
function checkLink(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badRequest(`url: "${raw.slice(0, 64)}" is not an absolute URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw badRequest(`url: only http and https links are accepted, got "${u.protocol}"`);
  return raw;
}

/** Semantic checks beyond the schema, and normalisation (trim, blank = absent, hosts sorted and unique). */
export function normalizeMarker(input: MarkerInput, nowMs: number): NewMarker {
  const hosts = [
    ...new Set((input.hosts ?? []).map((h) => h.trim()).filter((h) => h !== '')),
  ].sort();
  const service = text(input.service);
  if (!service && hosts.length === 0)
    throw badRequest(
      'a marker needs a "service", "hosts", or both (which code or which machines changed)',
    );
  const kind = input.kind;
  const url = text(input.url);
  const at = text(input.at);
  return {
    service,
    environment: text(input.environment),
    hosts,
    kind,
    // Kernel markers name their component like inferred ones do, so attribution matches them alike.
    component: text(input.component) ?? (kind === 'kernel' ? 'kernel' : null),
    from_version: text(input.from_version),
    to_version: text(input.to_version),
    commit: text(input.commit),
    url: url === null ? null : checkLink(url),
    description: text(input.description),
    at: at === null ? new Date(nowMs) : parseMarkerTime(at, nowMs),
    external_id: text(input.external_id),
  };
}

/**
 * Which stored fields must agree for a repeated external_id to count as the
 * same marker. `at`, `url` and `description` may legitimately differ between
 * retries (a default `at` of now, a rerun's URL), so they are not compared.
 */
export function sameMarker(a: NewMarker, b: NewMarker): string | null {
  const keys = [
    'kind',
    'service',
    'environment',
    'component',
    'from_version',
    'to_version',
    'commit',
  ] as const;
  for (const k of keys) if (a[k] !== b[k]) return k;
  if (a.hosts.join('\u0000') !== b.hosts.join('\u0000')) return 'hosts';
  return null;
}
