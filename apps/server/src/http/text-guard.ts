import type { FastifyInstance } from 'fastify';
import { isUnstorable } from '../text/sanitize.ts';
import { badRequest } from './errors.ts';

/** Deepest JSON nesting scanned; the API's bodies are a few levels deep, deeper ones are refused. */
const MAX_SCAN_DEPTH = 32;

/**
 * Why `value` cannot be stored, naming the place (`body/labels/team`), or
 * null: text with a NUL or a lone UTF-16 surrogate (keys too), or nesting
 * deeper than any API body. Iterative, so hostile nesting cannot overflow the
 * stack.
 */
export function findUnstorableText(value: unknown, root: string): string | null {
  const todo: Array<[unknown, string, number]> = [[value, root, 0]];
  while (todo.length) {
    const [v, path, depth] = todo.pop()!;
    if (typeof v === 'string') {
      if (isUnstorable(v))
        return `${path} contains a NUL character or a lone UTF-16 surrogate, which cannot be stored`;
      continue;
    }
    if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) continue;
    if (depth >= MAX_SCAN_DEPTH) return `${path} is nested more than ${MAX_SCAN_DEPTH} levels deep`;
    for (const [k, child] of Object.entries(v)) {
      if (isUnstorable(k))
        return `a key in ${path} contains a NUL character or a lone UTF-16 surrogate, which cannot be stored`;
      todo.push([child, `${path}/${k}`, depth + 1]);
    }
  }
  return null;
}

/**
 * REST input with a NUL or a lone surrogate (in the path, the query or a JSON
 * body) gets a 400 naming the field before any route sees it: PostgreSQL
 * would refuse the text mid-query (22021, 22P05, 22P02) and the caller would
 * see a 500. Runs after authentication (onRequest) and before schema
 * validation. OTLP bodies are raw buffers and are cleaned span by span instead
 * (otlp/sanitize.ts), so one odd span name does not refuse a batch.
 */
export function refuseUnstorableText(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const problem =
      findUnstorableText(request.params, 'params') ??
      findUnstorableText(request.query, 'querystring') ??
      findUnstorableText(request.body, 'body');
    if (problem) throw badRequest(problem);
  });
}
