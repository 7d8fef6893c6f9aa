/**
 * The one place the UI talks HTTP: the contract's typed request (`request(key, args)`) with
 * the bearer token the user gave (if any), and a word to the shell when the server wants a
 * token (401) so it can ask for one. Errors are the contract's ApiError (the server's
 * `{error, message}`).
 */
import { ApiError, createClient } from '@onset/contract';

export { ApiError };

const TOKEN_KEY = 'onset.token';

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

const client = createClient({
  token: getToken,
  onUnauthorized: (message) =>
    window.dispatchEvent(new CustomEvent(UNAUTHORIZED_EVENT, { detail: message })),
  // "Data arrived" for bench/ui: from here to the chart's paint is what the user waits for.
  onArrived: (path) => performance.mark('onset:arrived', { detail: path }),
});

/** `request('GET /api/v1/series/:id', {params: {id}})`: the answer typed from the contract. */
export const request = client.request;
