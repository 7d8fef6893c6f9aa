import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.ts';
import { createPool, type Pool } from './db/pool.ts';
import { migrate } from './db/migrate.ts';
import { distributeTables, prepareCitus } from './db/citus.ts';
import { Partitions } from './db/partitions.ts';
import { Registry } from './otlp/registry.ts';
import { startIngestPipeline } from './otlp/pipeline.ts';
import { IngestStats } from './otlp/stats.ts';
import { CardinalityGuard } from './cardinality/guard.ts';
import { buildApp, buildOtlpApp } from './app.ts';
import { startScheduler, type Scheduler } from './scheduler/index.ts';
import { runMaintenance } from './maintenance/retention.ts';
import { startSelfTracing } from './observability/tracing.ts';
import { ShardLeases } from './detection/shards.ts';

export interface RunningOnset {
  url: string;
  otlpUrl: string | null;
  config: Config;
  pool: Pool;
  app: FastifyInstance;
  /** The series registry the app and the scheduler share (with the cardinality guard). */
  registry: Registry;
  /** Run housekeeping now (partitions, retention, compaction). */
  maintain: () => Promise<unknown>;
  close: () => Promise<void>;
}

function urlOf(app: FastifyInstance): string {
  const addr = app.server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `http://${host}:${addr.port}`;
}

/** Migrate, then serve the API/UI port and the OTLP port, and run the scheduler. */
export async function startOnset(
  config: Config,
  opts: { scheduler?: boolean } = {},
): Promise<RunningOnset> {
  if (!config.databaseUrl)
    throw new Error('startOnset needs config.databaseUrl (main.ts starts the embedded PostgreSQL)');
  const citus = await prepareCitus(config.databaseUrl, config.distributed);
  await migrate(config.databaseUrl);
  if (citus) await distributeTables(config.databaseUrl);
  const pool = createPool(config.databaseUrl, 20, {
    citusCachedConns: citus ? config.citusCachedConns : 0,
  });
  const partitions = new Partitions(pool);
  const guard = new CardinalityGuard(config.cardinality, pool);
  await guard.reload();
  const registry = new Registry(pool, guard);
  // The journal starts before the app and its logger: its warnings go there once it exists.
  let warnIngest = (err: unknown, what: string) => console.error(`onset: ${what}:`, err);
  const ingest = await startIngestPipeline(
    pool,
    partitions,
    config.ingestWorkers,
    config.exemplarRateIntervalMs,
    config.ingestWriters,
    // On Citus every transaction writes its own histograms and durations (the journal is one node's table).
    citus
      ? undefined
      : { ms: config.histogramFoldMs, onError: (err, what) => warnIngest(err, what) },
  );
  // Detection shards are leased by servers that run the scheduler (detection/shards.ts).
  const detectLeases =
    opts.scheduler !== false
      ? new ShardLeases(pool, { shards: config.detectShards, ttlMs: config.detectLeaseTtlMs })
      : undefined;
  const ctx = {
    config,
    pool,
    registry,
    partitions,
    stats: new IngestStats(),
    ingest,
    detectLeases,
  };
  const maintain = () => runMaintenance(pool, partitions, config);
  await maintain();

  // Before any Fastify instance exists: the HTTP instrumentation attaches to new instances.
  const tracing = await startSelfTracing();
  const app = await buildApp(ctx);
  warnIngest = (err, what) => app.log.warn({ err }, what);
  await app.listen({ host: config.host, port: config.port });
  let otlpApp: FastifyInstance | null = null;
  if (config.otlpPort !== config.port && !(config.otlpPort === 0 && config.port !== 0)) {
    otlpApp = await buildOtlpApp(ctx);
    await otlpApp.listen({ host: config.host, port: config.otlpPort });
  } else if (config.otlpPort === 0 && config.port === 0) {
    otlpApp = await buildOtlpApp(ctx);
    await otlpApp.listen({ host: config.host, port: 0 });
  }
  let scheduler: Scheduler | null = null;
  if (opts.scheduler !== false)
    scheduler = await startScheduler({
      config,
      pool,
      partitions,
      log: app.log,
      registry,
      detectLeases,
    });

  let closed = false;
  return {
    url: urlOf(app),
    otlpUrl: otlpApp ? urlOf(otlpApp) : null,
    config,
    pool,
    app,
    registry,
    maintain,
    close: async () => {
      if (closed) return;
      closed = true;
      await scheduler?.stop();
      await otlpApp?.close();
      await app.close();
      await ingest.rates.stop();
      await ingest.journal?.close();
      await ingest.decoder.close();
      await pool.end();
      await tracing?.flush().catch(() => {});
    },
  };
}
