import { expect } from 'vitest';
import {
  ApiError,
  createClient,
  type Series,
  type SeriesList,
  type SeriesListQuery,
} from '@onset/contract';
import { normalizePath } from '../../src/telemetry/normalize.ts';

/** Read what a user would see in Onset: series and their quantiles, over the public API (the contract's typed request). */
export type { Series };

/** Every series matching `query`, page after page (the list answers 1,000 at most at once). */
export async function listSeries(baseUrl: string, query: SeriesListQuery): Promise<Series[]> {
  const client = createClient({ baseUrl });
  const all: Series[] = [];
  let offset: number | null = query.offset ?? 0;
  while (offset !== null) {
    const page: SeriesList = await client
      .request('GET /api/v1/series', { query: { ...query, offset } })
      .catch((e) => {
        throw e instanceof ApiError ? new Error(`GET /api/v1/series: ${e.status} ${e.text}`) : e;
      });
    all.push(...page.series);
    offset = page.next_offset;
  }
  return all;
}

/** Total count and the p50 over the last hour, in milliseconds. */
async function summary(
  baseUrl: string,
  seriesId: string,
): Promise<{ count: number; p50: number; p99: number }> {
  const answer = await createClient({ baseUrl })
    .request('GET /api/v1/series/:id/quantiles', {
      params: { id: seriesId },
      query: { from: 'now-1h', step: '1h', q: '0.5,0.99' },
    })
    .catch((e) => {
      throw e instanceof ApiError ? new Error(`quantiles: ${e.status} ${e.text}`) : e;
    });
  // The points layout (the default, asked for here).
  const points = 'points' in answer ? answer.points : [];
  const withData = points.filter((p) => p.count > 0);
  const count = withData.reduce((n, p) => n + p.count, 0);
  // One 1h step may straddle two buckets; take the busiest for the quantiles.
  const main = withData.sort((a, b) => b.count - a.count)[0];
  return { count, p50: main?.q['0.5'] ?? NaN, p99: main?.q['0.99'] ?? NaN };
}

/** Poll until the series matching `match` exists and has at least `minCount` observations. */
export async function waitForSeries(
  baseUrl: string,
  query: SeriesListQuery,
  match: (s: Series) => boolean,
  minCount: number,
  timeoutMs = 15_000,
): Promise<{ series: Series; count: number; p50: number; p99: number }> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no matching series';
  for (;;) {
    const found = (await listSeries(baseUrl, query)).find(match);
    if (found) {
      const s = await summary(baseUrl, found.id);
      if (s.count >= minCount) return { series: found, ...s };
      last = `series ${found.name} has ${s.count} observations`;
    }
    if (Date.now() > deadline) {
      const all = (await listSeries(baseUrl, query))
        .map((s) => `${s.op}/${s.view} ${s.name}`)
        .join(', ');
      throw new Error(`timed out: ${last} (wanted ${minCount}); series: ${all}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * The test workload's fsyncs (≥ 25 in `dataDir`), spawns of `true` (≥ 10) and one unmount of
 * `mnt` arrived at the server as series with plausible latencies. Returns the unmount series
 * for source-specific checks.
 */
export async function expectWorkloadSeries(
  baseUrl: string,
  service: string,
  paths: { dataDir: string; mnt: string },
): Promise<{ series: Series; count: number; p50: number; p99: number }> {
  const q = { service };
  const fsync = await waitForSeries(
    baseUrl,
    { ...q, op: 'fsync' },
    (s) => s.name === normalizePath(paths.dataDir),
    25,
  );
  expect(fsync.p50).toBeGreaterThan(0.001);
  expect(fsync.p50).toBeLessThan(5_000);
  const spawns = await waitForSeries(baseUrl, { ...q, op: 'spawn' }, (s) => s.name === 'true', 10);
  expect(spawns.p50).toBeGreaterThan(0.01);
  expect(spawns.p50).toBeLessThan(5_000);
  return waitForSeries(
    baseUrl,
    { ...q, op: 'unmount' },
    (s) => s.name === normalizePath(paths.mnt),
    1,
  );
}
