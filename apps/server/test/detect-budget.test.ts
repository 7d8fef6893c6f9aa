/**
 * The detection pass within its memory budget: with room for 2 detectors and
 * batches of 3 series it finds exactly what an unbounded pass finds (evicted
 * detectors are reloaded from their checkpoints), keeps at most 2 detectors in
 * memory, and reports series done / total while it runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '@onset/testkit';
import { Registry } from '../src/otlp/registry.ts';
import { Partitions } from '../src/db/partitions.ts';
import { runDetect } from '../src/detection/pass.ts';
import { cachedDetectors, runDetectionPass } from '../src/detection/engine.ts';
import { DETECTOR_BYTES } from '../src/config.ts';
import { progressOf, type PassProgress } from '../src/detection/budget.ts';
import {
  incidentTimes,
  replayIncidents,
  REPLAY_MEMBERS,
  REPLAY_REGRESSIONS,
} from '@onset/testkit/incidents';
import type { Regression } from '@onset/contract';

let server: TestServer;
const saved = { mb: process.env.ONSET_DETECT_CACHE_MB, batch: process.env.ONSET_DETECT_BATCH };
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  process.env.ONSET_DETECT_CACHE_MB = saved.mb;
  process.env.ONSET_DETECT_BATCH = saved.batch;
  if (saved.mb === undefined) delete process.env.ONSET_DETECT_CACHE_MB;
  if (saved.batch === undefined) delete process.env.ONSET_DETECT_BATCH;
  await server?.close();
});

describe('detection pass memory budget', () => {
  it('bounds the detector cache, finds the same regressions, and reports progress', async () => {
    process.env.ONSET_DETECT_CACHE_MB = String((2 * DETECTOR_BYTES) / (1024 * 1024));
    process.env.ONSET_DETECT_BATCH = '3';
    const times = incidentTimes();
    await replayIncidents({ otlpUrl: server.otlpUrl, apiUrl: server.url, times, phase: 1 });
    const pool = server.onset.pool;
    const deps = { pool, registry: new Registry(pool), partitions: new Partitions(pool) };

    const seen: PassProgress[] = [];
    const poll = setInterval(() => {
      const p = progressOf(pool);
      if (p) seen.push(p);
    }, 1);
    const first = await runDetect(deps, { uptoMs: times.endMs, pairUptoMs: Date.now() }).finally(
      () => clearInterval(poll),
    );
    expect(first.detection.series.total).toBeGreaterThan(6);
    expect(cachedDetectors(pool)).toBeLessThanOrEqual(2);
    expect(progressOf(pool)).toBeNull();
    expect(seen.length).toBeGreaterThan(0);
    for (const p of seen) {
      expect(p.series_total).toBe(first.detection.series.total);
      expect(p.series_done).toBeLessThanOrEqual(p.series_total);
    }
    expect(seen.some((p) => p.series_done > 0 && p.series_done < p.series_total)).toBe(true);

    const res = await fetch(`${server.url}/api/v1/regressions`);
    const found = ((await res.json()) as { regressions: Regression[] }).regressions;
    expect(found.map((r) => `${r.service}/${r.view}`).sort()).toEqual([...REPLAY_REGRESSIONS]);
    expect(found.flatMap((r) => r.members.map((m) => `${m.service}/${m.view}`)).sort()).toEqual([
      ...REPLAY_MEMBERS,
    ]);
    // The next pass reloads the evicted detectors from their checkpoints: nothing found twice.
    const again = await runDetectionPass(pool, { uptoMs: times.endMs + 5 * 60_000 });
    expect(again.regressions.opened).toBe(0);
    expect(cachedDetectors(pool)).toBeLessThanOrEqual(2);
    const status = (await (await fetch(`${server.url}/api/v1/detect`)).json()) as {
      running: unknown;
      passes: number;
    };
    expect(status.running).toBeNull();
    expect(status.passes).toBe(2);
  }, 120_000);
});
