/**
 * Evidence over what the official instrumentations really send (e2e/fixtures/sdk): Python's
 * `requests` CLIENT spans carry the old conventions' `http.url` with the concrete id
 * (`http://127.0.0.1:42281/quote/3`), a value per id, so an attribute comparison of the raw
 * values names ids (or, past 64 of them, nothing). Compared templated, as series names are, it
 * names the call that slowed (the recorded step: +25 ms in the api's /quote/{id}), never an id.
 */
import { describe, expect, it } from 'vitest';
import { attributeLifts, comparedValue, type EvidenceSample, type ScalarAttr } from '@onset/core';
import { decodeBody, loadBodies, loadManifest } from './fixtures/sdk/index.ts';

type Any = Record<string, any>;

function scalar(v: Any | undefined): ScalarAttr | undefined {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return String(v.stringValue);
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  if (v.boolValue !== undefined) return Boolean(v.boolValue);
  return undefined;
}

/** web's recorded CLIENT spans (requests), before and after the manifest's step. */
function webClientCalls(): { before: EvidenceSample[]; after: EvidenceSample[] } {
  const m = loadManifest('python-requests');
  const before: EvidenceSample[] = [];
  const after: EvidenceSample[] = [];
  for (const b of loadBodies('python-requests').filter((x) => x.signal === 'traces')) {
    const msg = decodeBody('traces', b.body);
    for (const r of msg.resourceSpans ?? [])
      for (const s of r.scopeSpans ?? [])
        for (const sp of s.spans ?? []) {
          if (sp.kind !== 3) continue;
          const attrs: Record<string, ScalarAttr> = {};
          for (const a of sp.attributes ?? []) {
            const v = scalar(a.value);
            if (v !== undefined) attrs[a.key] = v;
          }
          const start = Number(BigInt(String(sp.startTimeUnixNano)) / 1_000_000n);
          const ms =
            Number(BigInt(String(sp.endTimeUnixNano)) - BigInt(String(sp.startTimeUnixNano))) / 1e6;
          (start < m.stepAtMs ? before : after).push({ ms, attrs, start } as EvidenceSample);
        }
  }
  // The first three checkouts are the services warming up (45-200 ms, the JIT, first
  // connections): as the baseline they would put every call after the step under its p90.
  const warm = before
    .sort((a, b) => (a as { start?: number }).start! - (b as { start?: number }).start!)
    .slice(6);
  return { before: warm, after };
}

describe('attribute comparison of the recorded Python client spans', () => {
  it('compares http.url templated: the slowed call is named, never an id', () => {
    const { before, after } = webClientCalls();
    expect(before.length).toBeGreaterThan(10);
    expect(after.length).toBeGreaterThan(10);
    // The recording holds concrete ids in http.url.
    expect(before.some((s) => /\/(items|quote)\/\d+$/.test(String(s.attrs['http.url'])))).toBe(
      true,
    );
    const lifts = attributeLifts(before, after);
    const urls = lifts.filter((l) => l.key === 'http.url');
    for (const l of urls) expect(l.value, JSON.stringify(l)).not.toMatch(/\/\d+$/);
    // After the step the slow calls are the /quote ones (+25 ms in the api's GET /quote/{id}).
    expect(urls[0]?.value, JSON.stringify(lifts)).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/quote\/\{id\}$/,
    );
    // Compared by call, not by id: web's two calls, /items/{id} and /quote/{id}.
    const compared = new Set(
      [...before, ...after].map((x) => comparedValue('http.url', x.attrs['http.url']!)),
    );
    expect([...compared].map((u) => u.replace(/:\d+\//, ':<port>/')).sort()).toEqual([
      'http://127.0.0.1:<port>/items/{id}',
      'http://127.0.0.1:<port>/quote/{id}',
    ]);
  });
});
