import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { isDatabaseUnavailable } from '../db/pool.ts';

/** An error with an HTTP status and a stable machine code, rendered as {error, message}. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new HttpError(400, 'bad_request', message);
export const notFound = (message: string) => new HttpError(404, 'not_found', message);

export function sendError(reply: FastifyReply, err: HttpError): FastifyReply {
  if (err.retryAfterSeconds !== undefined)
    reply.header('Retry-After', String(err.retryAfterSeconds));
  return reply
    .status(err.statusCode)
    .type('application/json')
    .send({ error: err.code, message: err.message });
}

const FASTIFY_CODES: Record<string, [number, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'bad_request'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'bad_request'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'bad_request'],
};

/**
 * PostgreSQL refused a value the request carried: class 22 (data exception:
 * 22021 invalid byte sequence, 22P02 invalid text, 22P05 untranslatable
 * character, 22003 out of range, 22008 datetime out of range) or 54000 (a
 * value too large for an index row). Input is validated and cleaned before it
 * gets there (text-guard.ts, text/sanitize.ts); this is the safety net that
 * keeps a case the checks missed a 400 rather than a 500.
 */
function isRefusedValue(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown };
  return (
    typeof e?.code === 'string' &&
    typeof e.severity === 'string' && // set on every PostgreSQL error, never on Node or Fastify ones
    (/^22[0-9A-Z]{3}$/.test(e.code) || e.code === '54000')
  );
}

/** One error shape for the whole API: never a stack trace. */
export function installErrorHandler(app: FastifyInstance, opts: { notFound?: boolean } = {}): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpError) return sendError(reply, error);
    if (error.validation) return sendError(reply, new HttpError(400, 'bad_request', error.message));
    const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
    if (mapped) return sendError(reply, new HttpError(mapped[0], mapped[1], error.message));
    if (error instanceof SyntaxError)
      return sendError(reply, badRequest(`invalid JSON: ${error.message}`));
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error.message }, 'database unavailable');
      return sendError(
        reply,
        new HttpError(503, 'unavailable', 'the database is unreachable; retry later', 5),
      );
    }
    if (isRefusedValue(error)) {
      request.log.warn({ err: error.message, code: error.code }, 'value refused by PostgreSQL');
      return sendError(
        reply,
        badRequest(`a value in the request cannot be stored: ${error.message}`),
      );
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)
      return sendError(reply, new HttpError(error.statusCode, 'bad_request', error.message));
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, new HttpError(500, 'internal', 'internal error; see the server log'));
  });
  if (opts.notFound === false) return;
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, notFound(`no route for ${request.method} ${request.url.split('?')[0]}`)),
  );
}
