/** A marker as the server stores it (the fields the CLI reports). */
export interface StoredMarker {
  id: string;
  kind: string;
  service: string | null;
  hosts: string[];
  component: string | null;
  from_version: string | null;
  to_version: string | null;
  at: string;
}

/** The server said no (a 4xx other than 429): retrying the same body will not help. */
export class RefusedError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly serverMessage: string,
  ) {
    super(`server refused the marker (${status} ${code}): ${serverMessage}`);
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

/**
 * POST one marker. 429 and 5xx (and no answer at all) are retried with
 * backoff; the body carries an external_id, so a retry after a lost answer
 * cannot record the marker twice.
 */
export async function postMarker(
  body: object,
  opts: ClientOptions,
): Promise<{ marker: StoredMarker; replayed: boolean }> {
  const endpoint = new URL('/api/v1/deploys', opts.server).toString();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'onset-cli',
  };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const base = opts.baseDelayMs ?? 500;
  let lastProblem = '';
  for (let attempt = 0; attempt <= opts.retries; attempt++) {
    let delay = Math.min(base * 2 ** attempt, 10_000);
    try {
      const res = await fetch(endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      const text = await res.text();
      if (res.ok)
        return {
          marker: JSON.parse(text) as StoredMarker,
          replayed: res.headers.get('idempotent-replayed') === 'true',
        };
      let code = 'error';
      let message = text.slice(0, 500);
      try {
        const j = JSON.parse(text) as { error?: string; message?: string };
        code = j.error ?? code;
        message = j.message ?? message;
      } catch {
        // not JSON (a proxy's error page): keep the start of the text
      }
      if (res.status !== 429 && res.status < 500) throw new RefusedError(res.status, code, message);
      lastProblem = `${res.status} ${code}: ${message}`;
      delay = retryAfterMs(res.headers.get('retry-after')) ?? delay;
    } catch (err) {
      if (err instanceof RefusedError) throw err;
      const e = err as Error & { cause?: { code?: string; message?: string } };
      lastProblem =
        e.name === 'TimeoutError'
          ? `no answer within ${opts.timeoutMs} ms`
          : `${e.cause?.code ?? e.cause?.message ?? e.message}`;
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
