import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http/errors.ts';

/**
 * Per-token concurrency on the ingest routes (OTLP): a token may have at most
 * `perToken` exports in flight, counted from the moment its headers are
 * authenticated until the response is closed, so one client (or one leaked
 * token) cannot hold every connection, and the memory bodies can take is
 * bounded by tokens × perToken × ONSET_MAX_BODY_BYTES. Over the limit: 429
 * with Retry-After, which OTLP exporters retry after the delay. In open mode
 * every client shares one budget. Registered after auth: a request without a
 * valid token is a 401 and never takes a slot.
 */
export interface IngestLimitOptions {
  /** ONSET_INGEST_CONCURRENCY; 0 turns the limit off. */
  perToken: number;
  /** Retry-After on the 429, in seconds. */
  retryAfterSeconds?: number;
}

const bearer = (request: FastifyRequest) =>
  /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1]?.trim() ?? '';

export const ingestLimitPlugin = fp(
  async function ingestLimit(app: FastifyInstance, o: IngestLimitOptions) {
    if (o.perToken <= 0) return;
    const inFlight = new Map<string, number>();
    const limit = async (request: FastifyRequest, reply: FastifyReply) => {
      const key = bearer(request);
      const n = inFlight.get(key) ?? 0;
      if (n >= o.perToken)
        throw new HttpError(
          429,
          'too_many_requests',
          `more than ${o.perToken} concurrent exports with this token (ONSET_INGEST_CONCURRENCY); retry after the delay`,
          o.retryAfterSeconds ?? 1,
        );
      inFlight.set(key, n + 1);
      // 'close' comes once per response: sent, failed, or the client went away mid-body.
      reply.raw.once('close', () => {
        const left = (inFlight.get(key) ?? 1) - 1;
        if (left > 0) inFlight.set(key, left);
        else inFlight.delete(key);
      });
    };
    // Only on the ingest routes (a route-level hook), so other routes carry no extra hook.
    app.addHook('onRoute', (route) => {
      if (route.config?.scope !== 'ingest') return;
      const own = route.onRequest ? [route.onRequest].flat() : [];
      route.onRequest = [...own, limit];
    });
  },
  { name: 'onset-ingest-limit', fastify: '5.x' },
);
