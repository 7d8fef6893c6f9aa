import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Scope } from '../config.ts';
import { HttpError } from '../http/errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The bearer-token scope a route needs (api.md "Ports and auth"). */
    scope?: Scope;
  }
}

/** Paths whose every route must name a scope; the rest (health, docs, UI) are open. */
const GUARDED_PREFIXES = ['/api/', '/v1/'];

/** 401/403 for a request whose token does not grant `scope`; nothing when it does. */
function checkScope(tokens: Map<string, Set<Scope>>, request: FastifyRequest, scope: Scope): void {
  if (tokens.size === 0) return;
  const header = request.headers.authorization ?? '';
  const m = /^Bearer\s+(.+)$/i.exec(header);
  if (!m)
    throw new HttpError(
      401,
      'unauthorized',
      'missing bearer token (Authorization: Bearer <token>)',
    );
  const scopes = tokens.get(m[1]!.trim());
  if (!scopes) throw new HttpError(401, 'unauthorized', 'invalid token');
  if (!scopes.has(scope))
    throw new HttpError(403, 'forbidden', `this token lacks the "${scope}" scope`);
}

/**
 * Bearer tokens with scopes, in one stage for every route: routes name their
 * scope in `config.scope` and this onRequest hook checks it before anything
 * else runs (body parsing, validation), so an anonymous request is a 401
 * whatever its body. With no tokens configured (allowed only on loopback
 * binds) every request passes. A route under /api/ or /v1/ that names no
 * scope is refused at registration, so none can be left open by mistake.
 * Not encapsulated (fastify-plugin): the hooks apply to every feature plugin.
 */
export const authPlugin = fp(
  async function auth(app: FastifyInstance, opts: { tokens: Map<string, Set<Scope>> }) {
    app.addHook('onRoute', (route) => {
      if (GUARDED_PREFIXES.some((p) => route.url.startsWith(p)) && !route.config?.scope)
        throw new Error(`${String(route.method)} ${route.url} names no auth scope (config.scope)`);
    });
    app.addHook('onRequest', async (request) => {
      const scope = request.routeOptions.config?.scope;
      if (scope) checkScope(opts.tokens, request, scope);
    });
  },
  { name: 'onset-auth', fastify: '5.x' },
);
