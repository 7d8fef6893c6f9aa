import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import fastifyStatic from '@fastify/static';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './config.ts';
import type { Pool } from './db/pool.ts';
import type { Partitions } from './db/partitions.ts';
import { authPlugin } from './auth/plugin.ts';
import { installErrorHandler, sendError, notFound } from './http/errors.ts';
import { healthRoutes } from './health/routes.ts';
import { otlpRoutes } from './otlp/routes.ts';
import { seriesRoutes } from './series/routes.ts';
import type { Registry } from './otlp/registry.ts';
import type { IngestStats } from './otlp/stats.ts';

export const WEB_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/dist');

/** Everything a feature plugin may need; each plugin takes what it uses. */
export interface AppContext {
  config: Config;
  pool: Pool;
  registry: Registry;
  partitions: Partitions;
  stats: IngestStats;
  /** Wake the scheduler (e.g. after ingest) without waiting for the next tick. */
  onIngested?: (kind: 'traces' | 'metrics', count: number) => void;
}

function baseApp(config: Config, opts: { notFound?: boolean } = {}): FastifyInstance {
  const app = Fastify({
    logger: { level: config.logLevel },
    bodyLimit: 1024 * 1024,
    // Keep 200 responses fast under load: OTLP clients retry on their own timeouts.
    connectionTimeout: 0,
    keepAliveTimeout: 65_000,
  });
  installErrorHandler(app, opts);
  return app;
}

/** The main listener: UI, REST API, OpenAPI, OTLP. */
export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const hasUi = existsSync(path.join(WEB_DIST, 'index.html'));
  const app = baseApp(ctx.config, { notFound: !hasUi });
  const full = ctx;
  // First, so its onRoute check sees every route.
  await app.register(authPlugin, { tokens: ctx.config.tokens });
  await app.register(swagger, {
    openapi: {
      info: { title: 'Onset API', version: '1', description: 'Cross-service latency regressions, deploy attribution and SLOs.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(healthRoutes, { pool: ctx.pool });
  await app.register(otlpRoutes, full);
  await app.register(seriesRoutes, full);
  await registerFeatures(app, full);
  app.get('/docs/json', { schema: { hide: true } }, async () => app.swagger());

  if (hasUi) {
    await app.register(fastifyStatic, { root: WEB_DIST, prefix: '/', wildcard: false, index: 'index.html' });
    // Client-side routes (deep links like /regressions/42) get the SPA shell.
    app.setNotFoundHandler((req, reply) => {
      const url = req.url.split('?')[0]!;
      if (req.method === 'GET' && !url.startsWith('/api/') && !url.startsWith('/v1/') && !path.extname(url))
        return reply.type('text/html').sendFile('index.html');
      return sendError(reply, notFound(`no route for ${req.method} ${url}`));
    });
  }
  return app;
}

/** The OTLP-only listener on ONSET_OTLP_PORT (4318) so stock exporters work unconfigured. */
export async function buildOtlpApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = baseApp(ctx.config);
  const full = ctx;
  await app.register(authPlugin, { tokens: ctx.config.tokens });
  await app.register(healthRoutes, { pool: ctx.pool });
  await app.register(otlpRoutes, full);
  await app.register((await import('./observability/plugin.ts')).selfObservationPlugin, { ...full, metricsRoute: false });
  return app;
}

/** Feature plugins beyond ingest and series (deploys, regressions, SLOs, webhooks...). */
async function registerFeatures(_app: FastifyInstance, _ctx: AppContext): Promise<void> {
  // Each feature registers here: await app.register(featureRoutes, ctx);
  await _app.register((await import('./series/heatmap-routes.ts')).heatmapRoutes, _ctx);
  await _app.register((await import('./series/edge-routes.ts')).edgeRoutes, _ctx);
  await _app.register((await import('./deploys/routes.ts')).deployRoutes, _ctx);
  await _app.register((await import('./regressions/routes.ts')).regressionRoutes, _ctx);
  await _app.register((await import('./evidence/routes.ts')).evidenceRoutes, _ctx);
  await _app.register((await import('./mcp/routes.ts')).mcpRoutes, _ctx);
  await _app.register((await import('./slos/routes.ts')).sloRoutes, _ctx);
  await _app.register((await import('./slos/history-routes.ts')).sloHistoryRoutes, _ctx);
  await _app.register((await import('./slos/membership-routes.ts')).sloMembershipRoutes, _ctx);
  await _app.register((await import('./alerts/routes.ts')).alertRoutes, _ctx);
  await _app.register((await import('./webhooks/routes.ts')).webhookRoutes, _ctx);
  await _app.register((await import('./observability/plugin.ts')).selfObservationPlugin, _ctx);
}
