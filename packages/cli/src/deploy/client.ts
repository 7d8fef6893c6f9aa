import {
  ApiError,
  createClient,
  operationPath,
  type Answer,
  type Deploy,
  type DeployInput,
  type OperationKey,
  type OpArgs,
  type OpResponse,
} from '@onset/contract';
import { UsageError } from './markers.ts';
import type { Io } from '../io.ts';

/** The server said no (a 4xx other than 429): retrying the same request will not help. */
export class RefusedError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly serverMessage: string,
    what = 'the marker',
  ) {
    super(`server refused ${what} (${status} ${code}): ${serverMessage}`);
  }
}

/** Retries ran out on 429/5xx answers or network errors. */
export class UnavailableError extends Error {}

export interface ClientOptions {
  server: string;
  token?: string;
  retries: number;
  timeoutMs: number;
  /** First backoff step; doubled per attempt, capped at 10 s, unless the server sends Retry-After. */
  baseDelayMs?: number;
  log: (line: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const s = Number(header);
  if (Number.isFinite(s) && s >= 0) return Math.min(s * 1000, 60_000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - Date.now()), 60_000);
}

export interface RequestSpec {
  /** What the request is about, for RefusedError's message ("the marker"). */
  what: string;
  /** Added to the per-request timeout: a request the server holds on purpose (`?wait=`). */
  holdMs?: number;
}

/**
 * One API operation (the contract's typed request) with retries: 429 and 5xx (and no answer
 * at all) are retried with backoff (Retry-After honoured); any other 4xx is a RefusedError at
 * once. Returns the answer's body, typed from the operation's schema, and its headers.
 */
export async function requestOp<K extends OperationKey>(
  key: K,
  args: OpArgs<K>,
  spec: RequestSpec,
  opts: ClientOptions,
): Promise<Answer<OpResponse<K>>> {
  // The API's paths are absolute: a server URL's own path is not a prefix.
  const origin = new URL(opts.server).origin;
  const endpoint = new URL(operationPath(key, args), origin).toString();
  const client = createClient({
    baseUrl: origin,
    token: () => opts.token,
    headers: { 'user-agent': 'onset-cli' },
  });
  const timeoutMs = opts.timeoutMs + (spec.holdMs ?? 0);
  const base = opts.baseDelayMs ?? 500;
  let lastProblem = '';
  for (let attempt = 0; attempt <= opts.retries; attempt++) {
    let delay = Math.min(base * 2 ** attempt, 10_000);
    try {
      return await client.call(key, args, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      if (err instanceof ApiError && err.status > 0) {
        // Not the server's error body (a proxy's error page): keep the start of the text.
        const code = err.body?.error ?? 'error';
        const message = err.body?.message ?? err.text.slice(0, 500);
        if (err.status !== 429 && err.status < 500)
          throw new RefusedError(err.status, code, message, spec.what);
        lastProblem = `${err.status} ${code}: ${message}`;
        delay = retryAfterMs(err.headers.get('retry-after')) ?? delay;
      } else {
        const e = (err instanceof ApiError ? err.cause : err) as Error & {
          cause?: { code?: string; message?: string };
        };
        lastProblem =
          e.name === 'TimeoutError'
            ? `no answer within ${timeoutMs} ms`
            : `${e.cause?.code ?? e.cause?.message ?? e.message}`;
      }
    }
    if (attempt < opts.retries) {
      opts.log(
        `onset: ${endpoint}: ${lastProblem}; retrying in ${(delay / 1000).toFixed(1)} s (attempt ${attempt + 2} of ${opts.retries + 1})`,
      );
      await sleep(delay);
    }
  }
  throw new UnavailableError(
    `gave up on ${endpoint} after ${opts.retries + 1} attempts: ${lastProblem}`,
  );
}

/**
 * POST one marker. The body carries an external_id, so a retry after a lost
 * answer cannot record the marker twice.
 */
export async function postMarker(
  body: DeployInput,
  opts: ClientOptions,
): Promise<{ marker: Deploy; replayed: boolean }> {
  const res = await requestOp('POST /api/v1/deploys', { body }, { what: 'the marker' }, opts);
  return { marker: res.body, replayed: res.headers.get('idempotent-replayed') === 'true' };
}

/** Server, token, retries and timeout from the flags and the environment (ONSET_URL, ONSET_TOKEN). */
export function clientOptions(
  flags: { server?: string; token?: string; retries: string; timeout: string },
  io: Pick<Io, 'err' | 'env'>,
): ClientOptions {
  const int = (flag: string, raw: string) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0)
      throw new UsageError(`${flag} must be a whole number ≥ 0 (got "${raw}")`);
    return n;
  };
  const server = flags.server ?? io.env.ONSET_URL ?? 'http://127.0.0.1:8080';
  try {
    new URL(server);
  } catch {
    throw new UsageError(
      `--server / ONSET_URL "${server}" is not a URL, e.g. https://onset.example.com`,
    );
  }
  return {
    server,
    token: flags.token ?? io.env.ONSET_TOKEN,
    retries: int('--retries', flags.retries),
    timeoutMs: int('--timeout', flags.timeout),
    log: io.err,
  };
}
