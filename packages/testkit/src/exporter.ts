/**
 * What an OTLP exporter does with an export the server did not acknowledge: send it again,
 * unchanged, after the `Retry-After` it was given (or a short pause), until it is answered 200.
 * The fault tests (a PostgreSQL crash, a Citus worker down, a shard rebalance) send their load
 * through this, then check that every acknowledged span is stored exactly once.
 */

export interface ExportRefusal {
  /** HTTP status, 0 when the request failed or timed out. */
  status: number;
  retryAfter: string | null;
}

export interface ExportUntilAckedOptions {
  /** Past this time (ms since the epoch) a refusal throws instead of being retried. */
  giveUpAt: number;
  /** Default application/x-protobuf for a byte body, application/json for a string. */
  contentType?: string;
  /** One request's timeout; default 20 s. */
  timeoutMs?: number;
  /** The longest pause between tries (Retry-After is followed up to this); default 1 s. */
  maxWaitMs?: number;
  /** The pause when the answer has no Retry-After; default 200 ms. */
  defaultWaitMs?: number;
  /** Told of every refusal before the pause. */
  onRefused?: (r: ExportRefusal) => void;
}

/**
 * POST one export to `${otlpUrl}/v1/traces` until answered 200; resolves with the tries it took.
 * A function for `otlpUrl` is asked before every try (a test that restarts the server on another
 * port: the retry goes to whichever server is up by then).
 */
export async function exportUntilAcked(
  otlpUrl: string | (() => string),
  body: string | Uint8Array,
  opts: ExportUntilAckedOptions,
): Promise<number> {
  const contentType =
    opts.contentType ?? (typeof body === 'string' ? 'application/json' : 'application/x-protobuf');
  const payload = typeof body === 'string' ? body : new Uint8Array(body); // fetch wants an ArrayBuffer view
  for (let tries = 1; ; tries++) {
    const r: ExportRefusal = await fetch(
      `${typeof otlpUrl === 'string' ? otlpUrl : otlpUrl()}/v1/traces`,
      {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: payload,
        signal: AbortSignal.timeout(opts.timeoutMs ?? 20_000),
      },
    ).then(
      async (res) => {
        await res.arrayBuffer();
        return { status: res.status, retryAfter: res.headers.get('retry-after') };
      },
      () => ({ status: 0, retryAfter: null }),
    );
    if (r.status === 200) return tries;
    opts.onRefused?.(r);
    if (Date.now() > opts.giveUpAt) throw new Error(`export still refused (${r.status})`);
    const given = Number(r.retryAfter ?? NaN) * 1000;
    const wait = Math.min(
      opts.maxWaitMs ?? 1000,
      Number.isFinite(given) ? given : (opts.defaultWaitMs ?? 200),
    );
    await new Promise((res) => setTimeout(res, wait));
  }
}
