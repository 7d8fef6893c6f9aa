/**
 * One typed request for every operation of the API: `request(key, {params, query, body})`
 * builds the path from the key ("GET /api/v1/series/:id" with `params.id` put in), encodes
 * the query, sends the body as JSON and returns the success answer typed from the
 * operation's response schema. A non-2xx answer is an ApiError carrying the server's
 * `{error, message}` body. The web, the CLI and the tests call the API through it, so a
 * change to which route returns which shape fails every client's compile.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { operations, OperationKey } from '../api/operations.ts';
import type { ErrorBody } from '../api/common.ts';

const isErrorBody = (b: unknown): b is ErrorBody =>
  typeof b === 'object' &&
  b !== null &&
  typeof (b as ErrorBody).error === 'string' &&
  typeof (b as ErrorBody).message === 'string';

type Op<K extends OperationKey> = (typeof operations)[K];

/** The schema of a JSON payload: a TypeBox schema, or an OpenAPI `content` map's JSON entry. */
type JsonOf<S> = S extends { content: { 'application/json': { schema: infer J extends TSchema } } }
  ? Static<J>
  : S extends { content: Record<string, { schema: infer C extends TSchema }> }
    ? Static<C>
    : S extends TSchema
      ? Static<S>
      : never;

export type OpParams<K extends OperationKey> =
  Op<K> extends { params: infer S } ? JsonOf<S> : never;
export type OpQuery<K extends OperationKey> =
  Op<K> extends { querystring: infer S } ? JsonOf<S> : never;
export type OpBody<K extends OperationKey> = Op<K> extends { body: infer S } ? JsonOf<S> : never;

type SuccessStatus = 200 | 201 | 202 | 204;
type Responses<K extends OperationKey> = Op<K> extends { response: infer R } ? R : never;
/** What a success answer of the operation holds (undefined for 204). */
export type OpResponse<K extends OperationKey> = {
  [S in keyof Responses<K> & SuccessStatus]: S extends 204 ? undefined : JsonOf<Responses<K>[S]>;
}[keyof Responses<K> & SuccessStatus];

/** An argument is required when its schema has a required field, optional when all are, absent when the operation takes none. */
type Arg<Name extends string, T> = [T] extends [never]
  ? { [P in Name]?: never }
  : Record<string, never> extends T
    ? { [P in Name]?: T }
    : { [P in Name]: T };
export type OpArgs<K extends OperationKey> = Arg<'params', OpParams<K>> &
  Arg<'query', OpQuery<K>> &
  Arg<'body', OpBody<K>>;

/** Operations answered with a body (the reads a UI caches). */
export type GetOperationKey = Extract<OperationKey, `GET ${string}`>;

/** A refused or failed request: the HTTP status (0: no answer), the server's error code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly path: string,
    answer: { headers?: Headers; body?: unknown; text?: string; cause?: unknown } = {},
  ) {
    super(message, answer.cause === undefined ? undefined : { cause: answer.cause });
    this.name = 'ApiError';
    this.headers = answer.headers ?? new Headers();
    this.body = isErrorBody(answer.body) ? answer.body : undefined;
    this.text = answer.text ?? '';
  }

  /** The answer's headers (none when there was no answer), e.g. Retry-After. */
  readonly headers: Headers;
  /** The server's `{error, message}` body, when it sent one (a proxy's error page is not). */
  readonly body: ErrorBody | undefined;
  /** The answer's text as it came. */
  readonly text: string;

  /** The endpoint does not exist on this server (yet): show an empty state, not a failure. */
  get missingEndpoint(): boolean {
    return (
      this.status === 404 &&
      (/^no route for /.test(this.message) || /^Route \S+ not found$/.test(this.message))
    );
  }
}

export interface ClientOptions {
  /** Where the API is, e.g. `https://onset.example.com`; '' for the page's own origin. */
  baseUrl?: string;
  /** The bearer token, asked at every request (it can change while the client lives). */
  token?: () => string | null | undefined;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Headers sent with every request (e.g. a user-agent). */
  headers?: Record<string, string>;
  /** Called on a 401 with the server's message, before the ApiError is thrown. */
  onUnauthorized?: (message: string) => void;
  /** Called when an answer's body has arrived, before it is parsed. */
  onArrived?: (path: string) => void;
  /** The message of the ApiError for a request that got no answer. */
  networkMessage?: (e: Error) => string;
}

/** Per call: an abort signal (TanStack Query's, or a timeout). */
export interface CallInit {
  signal?: AbortSignal;
}

/** The path of an operation with its params put in and its query encoded (empty values left out). */
export function operationPath<K extends OperationKey>(
  key: K,
  args: { params?: unknown; query?: unknown } = {},
): string {
  const route = key.slice(key.indexOf(' ') + 1);
  const params = (args.params ?? {}) as Record<string, unknown>;
  const path = route.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined || v === null || v === '')
      throw new Error(`${key}: missing path parameter "${name}"`);
    return encodeURIComponent(String(v));
  });
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries((args.query ?? {}) as Record<string, unknown>))
    if (v !== undefined && v !== null && v !== '')
      qs.set(k, Array.isArray(v) ? v.join(',') : String(v));
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

export interface Answer<T> {
  body: T;
  status: number;
  headers: Headers;
}

export interface Client {
  /** The typed body of the operation's success answer. */
  request<K extends OperationKey>(key: K, args: OpArgs<K>, init?: CallInit): Promise<OpResponse<K>>;
  /** The same, with the status and headers of the answer (e.g. Idempotent-Replayed). */
  call<K extends OperationKey>(
    key: K,
    args: OpArgs<K>,
    init?: CallInit,
  ): Promise<Answer<OpResponse<K>>>;
}

export function createClient(opts: ClientOptions = {}): Client {
  const doFetch: typeof fetch = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const base = (opts.baseUrl ?? '').replace(/\/+$/, '');
  const network =
    opts.networkMessage ??
    ((e: Error) => `Cannot reach the Onset server (${e.message}). Is it running?`);

  async function call<K extends OperationKey>(
    key: K,
    args: OpArgs<K>,
    init: CallInit = {},
  ): Promise<Answer<OpResponse<K>>> {
    const method = key.slice(0, key.indexOf(' '));
    const path = operationPath(key, args);
    const headers = new Headers(opts.headers);
    headers.set('Accept', 'application/json');
    const token = opts.token?.();
    if (token) headers.set('Authorization', `Bearer ${token}`);
    // A POST always carries JSON: the server refuses body-less and text/plain POSTs, which
    // any web page could send cross-origin (docs/security.md).
    const json = args.body === undefined && method === 'POST' ? {} : args.body;
    if (json !== undefined) headers.set('Content-Type', 'application/json');
    let res: Response;
    try {
      res = await doFetch(base + path, {
        method,
        headers,
        body: json === undefined ? undefined : JSON.stringify(json),
        signal: init.signal,
      });
    } catch (e) {
      throw new ApiError(0, 'network', network(e as Error), path, { cause: e });
    }
    if (res.status === 204)
      return { body: undefined as OpResponse<K>, status: 204, headers: res.headers };
    const text = await res.text();
    opts.onArrived?.(path);
    let parsed: unknown = undefined;
    let isJson = true;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      isJson = false;
    }
    if (!res.ok) {
      const obj = (parsed ?? {}) as { error?: unknown; message?: unknown };
      const code = typeof obj.error === 'string' ? obj.error : `http_${res.status}`;
      const message =
        typeof obj.message === 'string' ? obj.message : text.slice(0, 200) || res.statusText;
      if (res.status === 401) opts.onUnauthorized?.(message);
      throw new ApiError(res.status, code, message, path, {
        headers: res.headers,
        body: parsed,
        text,
      });
    }
    // A YAML answer (the OpenSLO export) is its text.
    const body = (isJson ? parsed : text) as OpResponse<K>;
    return { body, status: res.status, headers: res.headers };
  }

  return {
    call,
    request: async (key, args, init) => (await call(key, args, init)).body,
  };
}
