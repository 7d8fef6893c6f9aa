/**
 * The one place the UI talks HTTP. Adds the bearer token (if the user gave
 * one), turns the API's `{error, message}` bodies into ApiError, and tells
 * the shell when the server wants a token (401) so it can ask for one.
 */
const TOKEN_KEY = 'onset.token';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly path: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The endpoint does not exist on this server (yet): show an empty state, not a failure. */
  get missingEndpoint(): boolean {
    return (
      this.status === 404 &&
      (/^no route for /.test(this.message) || /^Route \S+ not found$/.test(this.message))
    );
  }
}

export function getToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string | null): void {
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  } catch {
    /* private mode: the token lives for this page only */
  }
}

export const UNAUTHORIZED_EVENT = 'onset:unauthorized';

export async function apiFetch<T>(
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<T> {
  const headers = new Headers(init.headers);
  headers.set('Accept', 'application/json');
  const token = getToken();
  if (token) headers.set('Authorization', `Bearer ${token}`);
  let body = init.body;
  // A POST always carries JSON: the server refuses body-less and text/plain POSTs, which
  // any web page could send cross-origin (docs/security.md).
  const json =
    init.json === undefined && body == null && init.method?.toUpperCase() === 'POST'
      ? {}
      : init.json;
  if (json !== undefined) {
    headers.set('Content-Type', 'application/json');
    body = JSON.stringify(json);
  }
  let res: Response;
  try {
    res = await fetch(path, { ...init, headers, body });
  } catch (e) {
    throw new ApiError(
      0,
      'network',
      `Cannot reach the Onset server (${(e as Error).message}). Is it running?`,
      path,
    );
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  // "Data arrived" for bench/ui: from here to the chart's paint is what the user waits for.
  performance.mark('onset:arrived', { detail: path });
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const obj = (parsed ?? {}) as { error?: unknown; message?: unknown };
    const code = typeof obj.error === 'string' ? obj.error : `http_${res.status}`;
    const message =
      typeof obj.message === 'string' ? obj.message : text.slice(0, 200) || res.statusText;
    if (res.status === 401)
      window.dispatchEvent(new CustomEvent(UNAUTHORIZED_EVENT, { detail: message }));
    throw new ApiError(res.status, code, message, path);
  }
  return parsed as T;
}

/** Build `/api/v1/x?a=1&b=2`, leaving out empty values. */
export function apiPath(
  path: string,
  params: Record<string, string | number | boolean | undefined | null> = {},
): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') qs.set(k, String(v));
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}
