/**
 * Replays a Fleet through a running Onset server, in data-time order: the
 * warm-up history at once, then `stepMin` minutes at a time — the spans of
 * those minutes (OTLP JSON), the deploy markers whose time has come
 * (POST /api/v1/deploys, backdated `at`), a detection pass over minutes
 * before the step's end (POST /api/v1/detect with `upto`), and the list of
 * regressions, so the data minute at which each regression first appeared is
 * known.
 */
import type { Regression } from '@onset/contract';
import { MIN, type Fleet } from './fleet.ts';
import { Batch, exportBatch, type ExportStats } from './otlp.ts';

export interface ReplayTarget {
  apiUrl: string;
  otlpUrl: string;
  headers?: Record<string, string>;
}

export interface ReplayOptions {
  /** Data minutes per detection pass after the warm-up. */
  stepMin: number;
  /** Spans per OTLP request. */
  batchSpans?: number;
  /** OTLP requests in flight. */
  concurrency?: number;
  log?: (line: string) => void;
}

export interface SeenRegression {
  regression: Regression;
  /** The `upto` of the first pass after which it was listed (data time). */
  firstSeenMs: number;
}

export interface ReplayResult {
  /** Every regression listed after the last pass, with when it first appeared. */
  regressions: SeenRegression[];
  /** Posted marker ids by the generator's marker key. */
  markerIds: Map<string, string>;
  export: ExportStats;
  passes: number;
  seconds: { total: number; export: number; detect: number; generate: number };
}

async function api<T>(
  target: ReplayTarget,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${target.apiUrl}${path}`, {
    method,
    headers: {
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...target.headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

export async function replay(
  fleet: Fleet,
  target: ReplayTarget,
  opts: ReplayOptions,
): Promise<ReplayResult> {
  const log = opts.log ?? (() => {});
  const batchSpans = opts.batchSpans ?? 4000;
  const concurrency = opts.concurrency ?? 3;
  const started = performance.now();
  const seconds = { total: 0, export: 0, detect: 0, generate: 0 };
  const stats: ExportStats = { requests: 0, spans: 0, rejected: 0 };
  const markers = [...fleet.markers].sort((a, b) => a.atMs - b.atMs);
  const markerIds = new Map<string, string>();
  let nextMarker = 0;
  const seen = new Map<string, SeenRegression>();
  let passes = 0;
  let listed = new Set<string>();

  /** Send minutes [from, to): generated into batches, `concurrency` requests in flight. */
  async function send(from: number, to: number): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    let batch = new Batch();
    const flush = async () => {
      if (!batch.size) return;
      const b = batch;
      batch = new Batch();
      const p = exportBatch(target.otlpUrl, b, stats, target.headers).finally(() =>
        inFlight.delete(p),
      );
      inFlight.add(p);
      if (inFlight.size >= concurrency) await Promise.race(inFlight);
    };
    for (let t = from; t < to; t += MIN) {
      const g0 = performance.now();
      fleet.minute(t, (resource, span) => batch.add(resource, span));
      seconds.generate += (performance.now() - g0) / 1000;
      if (batch.size >= batchSpans) {
        const e0 = performance.now();
        await flush();
        seconds.export += (performance.now() - e0) / 1000;
      }
    }
    const e0 = performance.now();
    await flush();
    await Promise.all(inFlight);
    seconds.export += (performance.now() - e0) / 1000;
  }

  /** Post the markers whose time is before `to`, as CI hooks would have by then. */
  async function postMarkers(to: number): Promise<void> {
    while (nextMarker < markers.length && markers[nextMarker]!.atMs < to) {
      const m = markers[nextMarker++]!;
      const stored = await api<{ id: string }>(target, 'POST', '/api/v1/deploys', {
        ...m.body,
        at: new Date(m.atMs).toISOString(),
      });
      markerIds.set(m.key, stored.id);
    }
  }

  async function detect(upto: number): Promise<void> {
    const d0 = performance.now();
    await api(target, 'POST', '/api/v1/detect', { upto: new Date(upto).toISOString() });
    passes++;
    const { regressions } = await api<{ regressions: Regression[] }>(
      target,
      'GET',
      '/api/v1/regressions?status=all&limit=1000',
    );
    listed = new Set(regressions.map((r) => r.id));
    for (const r of regressions) {
      const s = seen.get(r.id);
      if (s) s.regression = r;
      else seen.set(r.id, { regression: r, firstSeenMs: upto });
    }
    seconds.detect += (performance.now() - d0) / 1000;
  }

  const warmEnd = fleet.t0 + fleet.opts.warmupMin * MIN;
  log(`warm-up: ${fleet.opts.warmupMin} data minutes…`);
  for (let t = fleet.t0; t < warmEnd; t += 10 * MIN) {
    const to = Math.min(warmEnd, t + 10 * MIN);
    await send(t, to);
    await postMarkers(to);
  }
  await detect(warmEnd);
  log(
    `  ${stats.spans} spans in ${((performance.now() - started) / 1000).toFixed(1)} s, first pass done`,
  );
  for (let t = warmEnd; t < fleet.tEnd; t += opts.stepMin * MIN) {
    const to = Math.min(fleet.tEnd, t + opts.stepMin * MIN);
    await send(t, to);
    await postMarkers(to);
    await detect(to);
    if (passes % 10 === 0)
      log(
        `  data minute ${(to - fleet.t0) / MIN}/${fleet.dataMinutes}: ${stats.spans} spans, ${seen.size} regressions, ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
  }
  seconds.total = (performance.now() - started) / 1000;
  // Regressions merged away by a later pass are not listed any more: only the last listing counts.
  const final = [...seen.values()].filter((s) => listed.has(s.regression.id));
  return { regressions: final, markerIds, export: stats, passes, seconds };
}
