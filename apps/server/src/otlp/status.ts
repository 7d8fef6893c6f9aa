import protobuf from 'protobufjs';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * OTLP/HTTP failure bodies: the spec wants a `google.rpc.Status` in the
 * request's encoding (protobuf for protobuf requests, its JSON form for JSON),
 * and the Collector decodes it to log why its data was refused. The message
 * definitions are the official ones (googleapis google/rpc/status.proto,
 * protobuf google/protobuf/any.proto).
 */
const root = protobuf.parse(`
  syntax = "proto3";
  package google.rpc;
  message Status {
    int32 code = 1;
    string message = 2;
    repeated google.protobuf.Any details = 3;
  }
`).root;
protobuf.parse(
  `syntax = "proto3"; package google.protobuf; message Any { string type_url = 1; bytes value = 2; }`,
  root,
);

export const Status = root.lookupType('google.rpc.Status');

/** google.rpc.Code for an HTTP status, after the mapping in google/rpc/code.proto. */
function grpcCode(httpStatus: number): number {
  switch (httpStatus) {
    case 400:
    case 413:
      return 3; // INVALID_ARGUMENT
    case 401:
      return 16; // UNAUTHENTICATED
    case 403:
      return 7; // PERMISSION_DENIED
    case 404:
      return 5; // NOT_FOUND
    case 415:
      return 12; // UNIMPLEMENTED (an encoding this receiver does not implement)
    case 429:
      return 8; // RESOURCE_EXHAUSTED
    case 503:
      return 14; // UNAVAILABLE
    case 504:
      return 4; // DEADLINE_EXCEEDED
    default:
      return httpStatus >= 500 ? 13 : 2; // INTERNAL : UNKNOWN
  }
}

const isProtobufRequest = (request: FastifyRequest) =>
  /^application\/(x-)?protobuf\b/i.test((request.headers['content-type'] ?? '').trim());

/**
 * Re-encodes this plugin's error replies (the API's `{error, message}`) as
 * google.rpc.Status. JSON requests keep `error` next to the Status fields, so
 * the API's error shape still holds for them.
 */
export function statusErrorBodies(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode < 400 || typeof payload !== 'string') return payload;
    let body: { error?: unknown; message?: unknown };
    try {
      body = JSON.parse(payload);
    } catch {
      return payload;
    }
    if (typeof body?.message !== 'string') return payload;
    const code = grpcCode(reply.statusCode);
    if (isProtobufRequest(request)) {
      reply.type('application/x-protobuf');
      return Buffer.from(Status.encode(Status.create({ code, message: body.message })).finish());
    }
    reply.type('application/json');
    return JSON.stringify({ code, message: body.message, details: [], error: body.error });
  });
}
