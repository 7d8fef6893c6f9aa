import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Scope } from '../config.ts';
import { HttpError } from '../http/errors.ts';

/**
 * Bearer tokens with scopes (api.md "Ports and auth"). With no tokens
 * configured (allowed only on loopback binds) every request passes.
 */
export function scopeGuard(tokens: Map<string, Set<Scope>>) {
  return (scope: Scope): preHandlerAsyncHookHandler =>
    async function requireScope(request: FastifyRequest, _reply: FastifyReply) {
      if (tokens.size === 0) return;
      const header = request.headers.authorization ?? '';
      const m = /^Bearer\s+(.+)$/i.exec(header);
      if (!m) throw new HttpError(401, 'unauthorized', 'missing bearer token (Authorization: Bearer <token>)');
      const scopes = tokens.get(m[1]!.trim());
      if (!scopes) throw new HttpError(401, 'unauthorized', 'invalid token');
      if (!scopes.has(scope)) throw new HttpError(403, 'forbidden', `this token lacks the "${scope}" scope`);
    };
}
export type ScopeGuard = ReturnType<typeof scopeGuard>;
