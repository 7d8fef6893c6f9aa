import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { toOpenApi30Document } from '@onset/contract';
import type { Config } from './config.ts';
import type { AppContext } from './context.ts';
import { authPlugin } from './auth/plugin.ts';
import { browserGuardPlugin } from './auth/browser.ts';
import { ingestLimitPlugin } from './auth/ingest-limit.ts';
import { installErrorHandler, sendError, notFound } from './http/errors.ts';
import { refuseUnstorableText } from './http/text-guard.ts';
import { serveUi } from './http/static-ui.ts';
import { installValidation } from './http/validation.ts';
import { healthRoutes } from './health/routes.ts';
import { otlpRoutes } from './otlp/routes.ts';
import { seriesRoutes } from './series/routes.ts';
import { heatmapRoutes } from './series/heatmap-routes.ts';
import { seriesGroupRoutes } from './series/group-routes.ts';
import { edgeRoutes } from './series/edge-routes.ts';
import { deployRoutes } from './deploys/routes.ts';
import { regressionRoutes } from './regressions/routes.ts';
import { regressionCohortRoutes } from './regressions/cohort-routes.ts';
import { detectionRoutes } from './detection/routes.ts';
import { verdictRoutes } from './verdicts/routes.ts';
import { flaggerGateRoutes } from './verdicts/flagger.ts';
import { evidenceRoutes } from './evidence/routes.ts';
import { mcpRoutes } from './mcp/routes.ts';
import { sloRoutes } from './slos/routes.ts';
import { sloHistoryRoutes } from './slos/history-routes.ts';
import { sloMembershipRoutes } from './slos/membership-routes.ts';
import { alertRoutes } from './alerts/routes.ts';
import { regressionAlertHooks } from './regressions/alerting.ts';
import { limitsRoutes } from './cardinality/routes.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { alertmanagerSilenceHook } from './webhooks/alertmanager-silences.ts';
import { selfObservationPlugin } from './observability/plugin.ts';
import { currentEgressPolicy } from './webhooks/egress.ts';

export type { AppContext };

const WEB_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/dist');

function baseApp(config: Config, opts: { notFound?: boolean } = {}): FastifyInstance {
  const app = Fastify({
    logger: { level: config.logLevel },
    // Fastify logs every request at info; one line per request at debug instead (below),
    // so the default log says what happened to the service, not each OTLP post.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // Path parameters are validated by their schemas (400) or not found (404); the router's own
    // cut at 100 characters answered a 414 in Fastify's error shape, outside the document.
    // Node's header limit (16 KiB) still bounds the URL.
    routerOptions: { maxParamLength: 16 * 1024 },
    // Keep 200 responses fast under load: OTLP clients retry on their own timeouts.
    connectionTimeout: 0,
    keepAliveTimeout: 65_000,
    // A client must send its whole request (headers and body) within this time, or get 408 and a
    // closed connection: a body trickled 1 byte at a time cannot hold a socket and its buffers.
    // Handlers are not limited by it. Node checks it every connectionsCheckingInterval.
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.max(250, Math.min(30_000, config.requestTimeoutMs / 4)),
    },
  });
  app.addHook('onResponse', (req, reply, done) => {
    req.log.debug(
      { method: req.method, url: req.url, status: reply.statusCode, ms: reply.elapsedTime },
      'request completed',
    );
    done();
  });
  installErrorHandler(app, opts);
  refuseUnstorableText(app);
  installValidation(app);
  return app;
}

/**
 * On the headers, before any body is read: tokens first (a 401 before anything else), then the
 * open-mode browser checks (auth/browser.ts), then the per-token ingest concurrency (429).
 */
async function guards(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(authPlugin, { tokens: config.tokens });
  await app.register(browserGuardPlugin, {
    open: config.tokens.size === 0,
    bindHost: config.host,
    allowedHosts: config.allowedHosts,
    publicUrl: config.publicUrl,
  });
  await app.register(ingestLimitPlugin, { perToken: config.ingestConcurrency });
}

/** The main listener: UI, REST API, OpenAPI, OTLP. */
export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  // A malformed ONSET_WEBHOOK_ALLOW stops start-up here, not the first webhook request.
  currentEgressPolicy();
  const hasUi = existsSync(path.join(WEB_DIST, 'index.html'));
  const app = baseApp(ctx.config, { notFound: !hasUi });
  const full = ctx;
  // First, so its onRoute check sees every route.
  await guards(app, ctx.config);
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Onset API',
        version: '1',
        description: 'Cross-service latency regressions, deploy attribution and SLOs.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    // OpenAPI 3.0 spelling of what Ajv validates (exclusive bounds, optional nullable bodies).
    transformObject: (doc) => toOpenApi30Document('openapiObject' in doc ? doc.openapiObject : {}),
  });
  await app.register(healthRoutes, { pool: ctx.pool });
  await app.register(otlpRoutes, full);
  await app.register((api) => apiRoutes(api, full), { prefix: '/api/v1' });
  await app.register(mcpRoutes, full);
  await app.register(selfObservationPlugin, full);
  app.get('/docs/json', { schema: { hide: true } }, async () => app.swagger());

  if (hasUi) {
    await serveUi(app, WEB_DIST);
    // Client-side routes (deep links like /regressions/42) get the SPA shell.
    app.setNotFoundHandler((req, reply) => {
      const url = req.url.split('?')[0]!;
      if (
        req.method === 'GET' &&
        !url.startsWith('/api/') &&
        !url.startsWith('/v1/') &&
        !path.extname(url)
      )
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
  await guards(app, ctx.config);
  await app.register(healthRoutes, { pool: ctx.pool });
  await app.register(otlpRoutes, full);
  await app.register(selfObservationPlugin, { ...full, metricsRoute: false });
  return app;
}

/** The REST API: every feature's routes, under the one /api/v1 prefix. */
async function apiRoutes(api: FastifyInstance, ctx: AppContext): Promise<void> {
  await api.register(seriesRoutes, ctx);
  await api.register(heatmapRoutes, ctx);
  await api.register(seriesGroupRoutes, ctx);
  await api.register(edgeRoutes, ctx);
  await api.register(deployRoutes, ctx);
  await api.register(verdictRoutes, ctx);
  await api.register(flaggerGateRoutes, ctx);
  await api.register(regressionRoutes, ctx);
  await api.register(regressionCohortRoutes, ctx);
  await api.register(detectionRoutes, ctx);
  await api.register(evidenceRoutes, ctx);
  await api.register(sloRoutes, ctx);
  await api.register(sloHistoryRoutes, ctx);
  await api.register(sloMembershipRoutes, ctx);
  // Each alert kind's acknowledge/resolve hook comes from the feature that owns what it is about.
  await api.register(alertRoutes, {
    ...ctx,
    alertKinds: { regression: regressionAlertHooks },
    onSilencesChanged: alertmanagerSilenceHook(ctx.pool, api.log),
  });
  await api.register(webhookRoutes, ctx);
  await api.register(limitsRoutes, ctx);
}
