import type { FastifyInstance } from 'fastify';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ALERT_STATUSES, ALERT_TYPES, OPS } from '@onset/contract';

/** A read-only view of the HTTP API, called with the MCP caller's own token, so scopes apply as to any client. */
type Get = (path: string, query?: Record<string, string | number | undefined>) => Promise<unknown>;

class ApiError extends Error {}

function apiGet(app: FastifyInstance, authorization: string | undefined): Get {
  return async (path, query = {}) => {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query))
      if (v !== undefined && v !== '') qs.set(k, String(v));
    const res = await app.inject({
      method: 'GET',
      url: qs.size ? `${path}?${qs}` : path,
      headers: authorization ? { authorization } : {},
    });
    const body = res.body ? (JSON.parse(res.body) as unknown) : null;
    if (res.statusCode >= 400) {
      const msg = (body as { message?: string } | null)?.message ?? res.body;
      throw new ApiError(`GET ${path} → ${res.statusCode}: ${msg}`);
    }
    return body;
  };
}

const result = (value: unknown) => ({
  content: [{ type: 'text' as const, text: JSON.stringify(value, null, 1) }],
  structuredContent: value as Record<string, unknown>,
});

/** Tool errors are answers the assistant can read (isError), not protocol failures. */
async function answer(f: () => Promise<unknown>) {
  try {
    return result(await f());
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { content: [{ type: 'text' as const, text: e.message }], isError: true };
  }
}

const time = z.string().max(64).describe('RFC 3339, epoch ms, or relative like now-6h');

/**
 * The MCP tools (docs/mcp.md): read-only, each one documented API call (or
 * two), so their answers have the shapes api.md documents.
 */
export function mcpServer(
  app: FastifyInstance,
  authorization: string | undefined,
  version: string,
): McpServer {
  const get = apiGet(app, authorization);
  const server = new McpServer({ name: 'onset', version });
  const readOnly = { readOnlyHint: true, openWorldHint: false };

  server.registerTool(
    'list_regressions',
    {
      title: 'List regressions',
      description:
        'Latency regressions (one per incident) newest onset first, with before/after p50/p99, ranked suspect deploys, cohort, hints and the member series it was found on. Filters are optional.',
      inputSchema: {
        service: z.string().max(256).optional(),
        op: z.enum(OPS).optional(),
        view: z.enum(['server', 'client', 'internal', 'gap']).optional(),
        name: z.string().max(1024).optional(),
        peer: z.string().max(256).optional(),
        status: z
          .string()
          .max(64)
          .optional()
          .describe('open, acknowledged, resolved, active or all (default)'),
        since: time.optional().describe('onset at or after'),
        limit: z.number().int().min(1).max(1000).optional(),
      },
      annotations: readOnly,
    },
    (args) => answer(() => get('/api/v1/regressions', { ...args, limit: args.limit ?? 50 })),
  );

  server.registerTool(
    'get_regression',
    {
      title: 'Get a regression with its evidence',
      description:
        'One regression and its evidence: exemplar spans before/after the onset (with trace links), attribute values over-represented among slow calls, and hints naming known mechanisms (e.g. tcp-delayed-ack) with the measured numbers.',
      inputSchema: { id: z.string().regex(/^\d{1,18}$/) },
      annotations: readOnly,
    },
    ({ id }) =>
      answer(async () => ({
        regression: await get(`/api/v1/regressions/${id}`),
        evidence: await get(`/api/v1/regressions/${id}/evidence`),
      })),
  );

  server.registerTool(
    'list_series',
    {
      title: 'List latency series',
      description:
        'Latency series (service, op, view, name, peer) with their ids, for query_series_quantiles.',
      inputSchema: {
        service: z.string().max(256).optional(),
        op: z.enum(OPS).optional(),
        view: z.enum(['server', 'client', 'internal', 'gap']).optional(),
      },
      annotations: readOnly,
    },
    (args) => answer(() => get('/api/v1/series', args)),
  );

  server.registerTool(
    'query_series_quantiles',
    {
      title: "Query a series' quantiles",
      description:
        'Latency quantiles (ms) of one series per step, from the log-bucketed histograms (≤ 2% relative error).',
      inputSchema: {
        series_id: z.string().regex(/^\d{1,18}$/),
        from: time.optional().describe('default now-6h'),
        to: time.optional().describe('default now'),
        step: z.string().max(16).optional().describe('e.g. 1m, 5m, 1h'),
        q: z.string().max(64).optional().describe('comma-separated quantiles, default 0.5,0.99'),
      },
      annotations: readOnly,
    },
    ({ series_id, ...rest }) => answer(() => get(`/api/v1/series/${series_id}/quantiles`, rest)),
  );

  server.registerTool(
    'list_deploys',
    {
      title: 'List deploy markers',
      description:
        'Deploy markers (code, dependency, kernel, config, infra) newest first; series_id keeps those that can explain a change in that series.',
      inputSchema: {
        service: z.string().max(256).optional(),
        series_id: z
          .string()
          .regex(/^\d{1,18}$/)
          .optional(),
        host: z.string().max(256).optional(),
        from: time.optional(),
        to: time.optional(),
        limit: z.number().int().min(1).max(1000).optional(),
      },
      annotations: readOnly,
    },
    (args) => answer(() => get('/api/v1/deploys', { ...args, limit: args.limit ?? 50 })),
  );

  server.registerTool(
    'get_trace',
    {
      title: 'Get a trace',
      description:
        "One trace's stored spans (an exemplar's trace_id from get_regression), parents before children: service, host, series, kind, start offset, duration and attributes, and the external viewer's trace_url when configured. Raw spans are kept 48 h.",
      inputSchema: { trace_id: z.string().regex(/^[0-9a-f]{32}$/) },
      annotations: readOnly,
    },
    ({ trace_id }) => answer(() => get(`/api/v1/traces/${trace_id}`)),
  );

  server.registerTool(
    'list_alerts',
    {
      title: 'List alerts with their text',
      description:
        'Alert episodes newest first (firing and resolved), each with the text every page-out carries (text.title, one line per quantile or burn window, text.cause), who was paged (paging, notifications), acknowledgement, silence and reopening (reopened: when, by whom, why). Filters are optional.',
      inputSchema: {
        status: z.enum(ALERT_STATUSES).optional(),
        type: z.enum(ALERT_TYPES).optional(),
        service: z.string().max(256).optional(),
        regression_id: z.string().max(64).optional(),
        slo_id: z
          .string()
          .regex(/^\d{1,18}$/)
          .optional(),
        since: time.optional().describe('started or resolved at or after'),
        limit: z.number().int().min(1).max(1000).optional(),
      },
      annotations: readOnly,
    },
    (args) => answer(() => get('/api/v1/alerts', { ...args, limit: args.limit ?? 50 })),
  );

  server.registerTool(
    'list_slos',
    {
      title: 'List SLOs and their burn',
      description:
        'Latency SLOs with their current status: attainment, error budget left and burn rates.',
      inputSchema: { service: z.string().max(256).optional() },
      annotations: readOnly,
    },
    (args) => answer(() => get('/api/v1/slos', args)),
  );

  return server;
}
