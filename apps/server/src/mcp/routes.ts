import type { FastifyInstance } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AppContext } from '../context.ts';
import { mcpServer } from './tools.ts';

const VERSION = '1';

/**
 * Model Context Protocol over streamable HTTP at /mcp (docs/mcp.md), stateless:
 * each POST is one JSON-RPC exchange with a fresh server, so any instance
 * behind a load balancer can answer. Scope `read`, like the API it wraps.
 */
export async function mcpRoutes(app: FastifyInstance, _ctx: AppContext): Promise<void> {
  app.post('/mcp', { config: { scope: 'read' }, schema: { hide: true } }, async (req, reply) => {
    const server = mcpServer(app, req.headers.authorization, VERSION);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  });
  // No server-initiated streams or sessions in stateless mode.
  const notAllowed = async (_req: unknown, reply: import('fastify').FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed: POST JSON-RPC messages to /mcp' },
        id: null,
      });
  app.get('/mcp', { config: { scope: 'read' }, schema: { hide: true } }, notAllowed);
  app.delete('/mcp', { config: { scope: 'read' }, schema: { hide: true } }, notAllowed);
}
