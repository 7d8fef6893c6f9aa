/**
 * /docs/json is generated from the contract: every operation of the public
 * API is in `operations` of @onset/contract, and the parameters, request
 * body and responses the server publishes for it are exactly the contract's
 * schemas (as @fastify/swagger writes them in OpenAPI 3.0).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, toOpenApi30Bounds, type OperationKey } from '@onset/contract';
import { startTestServer, type TestServer } from '@onset/testkit';

type Json = Record<string, unknown>;
interface OpenApiOperation {
  parameters?: Array<{
    in: string;
    name: string;
    required: boolean;
    description?: string;
    schema: Json;
  }>;
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, { content?: Record<string, { schema: Json }> }>;
}
interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOperation>>;
}

let server: TestServer;
let doc: OpenApiDoc;
beforeAll(async () => {
  server = await startTestServer();
  const res = await fetch(`${server.url}/docs/json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as OpenApiDoc;
});
afterAll(async () => {
  await server?.close();
});

/**
 * A TypeBox schema as plain JSON in OpenAPI 3.0 spelling, as @fastify/swagger
 * writes it: `const: x` is `enum: [x]`, `anyOf [X, null]` is X with
 * `nullable: true`, a record's `patternProperties {"^(.*)$": X}` is
 * `additionalProperties: X`, and a numeric `exclusiveMinimum: n` is
 * `minimum: n, exclusiveMinimum: true` (toOpenApi30Bounds, applied by the server).
 */
function openApi(schema: unknown): unknown {
  const plain = toOpenApi30Bounds(JSON.parse(JSON.stringify(schema)) as unknown);
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (!v || typeof v !== 'object') return v;
    const out: Json = {};
    for (const [k, x] of Object.entries(v as Json)) {
      if (k === 'const') out.enum = [x];
      else if (k === 'patternProperties' && Object.keys(x as Json).join() === '^(.*)$')
        out.additionalProperties = walk((x as Json)['^(.*)$']);
      else out[k] = walk(x);
    }
    const anyOf = out.anyOf as Json[] | undefined;
    const isNull = (x: Json) => x.type === 'null' && Object.keys(x).length === 1;
    if (anyOf?.some(isNull)) {
      const rest = anyOf.filter((x) => !isNull(x));
      const { anyOf: _drop, ...siblings } = out;
      return rest.length === 1
        ? { ...rest[0], ...siblings, nullable: true }
        : { anyOf: rest, ...siblings, nullable: true };
    }
    return out;
  };
  return walk(plain);
}

/** The OpenAPI parameters a querystring or params object schema becomes. */
function parametersOf(schema: unknown, where: 'query' | 'path') {
  const s = openApi(schema) as { properties: Record<string, Json>; required?: string[] };
  return Object.entries(s.properties).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return {
      in: where,
      name,
      required: where === 'path' || (s.required ?? []).includes(name),
      ...(description !== undefined ? { description } : {}),
      schema: rest,
    };
  });
}

const keyOf = (path: string, method: string) =>
  `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`;
const isPublicApi = (path: string) =>
  path.startsWith('/api/') || path === '/healthz' || path === '/readyz';

describe('/docs/json is the contract', () => {
  it('publishes exactly the operations of the contract', () => {
    const published = Object.entries(doc.paths)
      .filter(([path]) => isPublicApi(path))
      .flatMap(([path, methods]) => Object.keys(methods).map((m) => keyOf(path, m)))
      .sort();
    expect(published).toEqual(Object.keys(operations).sort());
  });

  it.each(Object.keys(operations) as OperationKey[])(
    "%s: parameters, body and responses are the contract's",
    (key) => {
      const [method, path] = key.split(' ') as [string, string];
      const op = doc.paths[path.replace(/:(\w+)/g, '{$1}')]![method.toLowerCase()]!;
      const c = operations[key] as {
        params?: unknown;
        querystring?: unknown;
        body?: unknown;
        response?: Record<string, unknown>;
      };

      const want = [
        ...(c.querystring ? parametersOf(c.querystring, 'query') : []),
        ...(c.params ? parametersOf(c.params, 'path') : []),
      ];
      const sortByName = <T extends { in: string; name: string }>(list: T[]) =>
        [...list].sort((a, b) => `${a.in}:${a.name}`.localeCompare(`${b.in}:${b.name}`));
      expect(sortByName(op.parameters ?? [])).toEqual(sortByName(want));

      if (c.body === undefined) expect(op.requestBody).toBeUndefined();
      else {
        const body = c.body as { content?: Record<string, { schema: unknown }> };
        const wantContent = body.content
          ? Object.fromEntries(
              Object.entries(body.content).map(([t, v]) => [t, { schema: openApi(v.schema) }]),
            )
          : { 'application/json': { schema: openApi(c.body) } };
        expect(op.requestBody?.content).toEqual(wantContent);
      }

      // Each response as {media type: schema}: JSON unless the contract names its media types.
      const published = Object.fromEntries(
        Object.entries(op.responses)
          .filter(([, r]) => r.content)
          .map(([status, r]) => [
            status,
            Object.fromEntries(Object.entries(r.content!).map(([t, v]) => [t, v.schema])),
          ]),
      );
      const wanted = Object.fromEntries(
        Object.entries(c.response ?? {})
          .filter(([status]) => status !== '204')
          .map(([status, schema]) => {
            const content = (schema as { content?: Record<string, { schema: unknown }> }).content;
            return [
              status,
              content
                ? Object.fromEntries(
                    Object.entries(content).map(([t, v]) => [t, openApi(v.schema)]),
                  )
                : { 'application/json': openApi(schema) },
            ];
          }),
      );
      expect(published).toEqual(wanted);
      // Every status an operation can answer is declared, not only its success.
      const declared = Object.keys(op.responses);
      if (!['GET /healthz', 'GET /readyz'].includes(key))
        expect(declared).toEqual(expect.arrayContaining(['401', '403', '408', '421', '503']));
      if (c.params) expect(declared).toEqual(expect.arrayContaining(['400', '404']));
    },
  );
});
