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

/**
 * The token of an Authorization header: `Bearer <token>`, or HTTP Basic with the token as
 * the password (`https://onset:<token>@host/...`: what a client that cannot set headers
 * sends, e.g. a Flagger webhook, whose Go client turns a URL's user info into Basic).
 */
function tokenOf(header: string): string | null {
  const bearer = /^Bearer\s+(.+)$/i.exec(header);
  if (bearer) return bearer[1]!.trim();
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!basic) return null;
  const pair = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  return colon >= 0 && colon < pair.length - 1 ? pair.slice(colon + 1) : null;
}

/** 401/403 for a request whose token does not grant `scope`; nothing when it does. */
function checkScope(tokens: Map<string, Set<Scope>>, request: FastifyRequest, scope: Scope): void {
  if (tokens.size === 0) return;
  const token = tokenOf(request.headers.authorization ?? '');
  if (token === null)
    throw new HttpError(
      401,
      'unauthorized',
      'missing bearer token (Authorization: Bearer <token>)',
    );
  const scopes = tokens.get(token);
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
