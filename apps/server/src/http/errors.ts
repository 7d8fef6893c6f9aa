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
