/**
 * Every background job (maintenance, SLO evaluation, webhook delivery,
 * Alertmanager refresh, pairing + detection, Grafana annotation push), run
 * against a PostgreSQL that refuses connections: each one fails with an
 * error the scheduler's DatabaseAvailability takes as an outage (so it is
 * logged once per outage and waited out with backoff, db-outage.test.ts),
 * and none logs the outage itself at warn or error level.
 */
import { afterAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JobHelpers } from 'graphile-worker';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig } from '../src/config.ts';
import { createPool } from '../src/db/pool.ts';
import { Partitions } from '../src/db/partitions.ts';
import { freePort } from '../src/db/embedded.ts';
import { isOutage } from '../src/db/availability.ts';
import { backgroundFeatures } from '../src/scheduler/index.ts';
import { Registry } from '../src/otlp/registry.ts';

const grafana = http.createServer((_req, res) => res.end('{}'));
afterAll(() => new Promise<void>((r) => grafana.close(() => r())));

describe('background jobs during a database outage', () => {
  it('every job fails as an outage and leaves reporting it to the scheduler', async () => {
    await new Promise<void>((r) => grafana.listen(0, '127.0.0.1', r));
    const closedPort = await freePort(); // nothing listens there: connections are refused
    const pool = createPool(`postgres://onset:x@127.0.0.1:${closedPort}/onset`, 2);
    const lines: Array<{ level: string; msg: string }> = [];
    const capture =
      (level: string) =>
      (a: unknown, b?: unknown): void => {
        lines.push({ level, msg: typeof a === 'string' ? a : String(b) });
      };
    const log = {
      info: capture('info'),
      debug: capture('debug'),
      warn: capture('warn'),
      error: capture('error'),
      fatal: capture('fatal'),
      trace: capture('trace'),
      child: () => log,
      level: 'info',
      silent: () => {},
    } as unknown as FastifyBaseLogger;
    const config = loadConfig({
      DATABASE_URL: `postgres://onset:x@127.0.0.1:${closedPort}/onset`,
      GRAFANA_URL: `http://127.0.0.1:${(grafana.address() as AddressInfo).port}`,
      GRAFANA_TOKEN: 'token',
    });
    const helpers = {
      addJob: () => pool.query('SELECT 1'), // queueing a follow-up needs the database too
    } as unknown as JobHelpers;
    const features = backgroundFeatures({
      config,
      pool,
      partitions: new Partitions(pool),
      log,
      registry: new Registry(pool),
    });
    const tasks = features.flatMap((f) => Object.entries(f.tasks));
    const names = tasks.map(([name]) => name);
    for (const expected of [
      'maintenance',
      'slo_evaluate',
      'webhook_deliver',
      'alertmanager_refresh',
      'detect_regressions',
      'grafana_annotations',
    ])
      expect(names).toContain(expected);
    for (const [name, task] of tasks) {
      const err = await Promise.resolve(task!({}, helpers)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, `${name} should fail while the database is away`).not.toBeNull();
      expect(isOutage(err), `${name} failed with ${String(err)}`).toBe(true);
    }
    expect(lines.filter((l) => ['warn', 'error', 'fatal'].includes(l.level))).toEqual([]);
    await pool.end();
  });
});
