/**
 * A webhook's credentials (contract WebhookAuth): the header they become on
 * every request to the receiver, and what the API shows of them (never the
 * password, token or header value; docs/webhooks.md "Credentials").
 */
import type { WebhookAuth, WebhookAuthShown } from '@onset/contract';

/** Headers Onset sets itself (or the HTTP client owns): a custom header cannot replace them. */
const RESERVED =
  /^(content-type|content-length|host|user-agent|connection|transfer-encoding|x-onset-.*)$/i;

/** Why a custom header name cannot be used, or null when it can. */
export function authProblem(
  auth: WebhookAuth | { type: 'none' } | null | undefined,
): string | null {
  if (auth?.type === 'header' && RESERVED.test(auth.name))
    return `auth.name: ${auth.name} is a header Onset sets itself`;
  return null;
}

/** What is stored from the input: `{"type": "none"}` (or nothing) is no credentials. */
export function storedAuth(auth: WebhookAuth | { type: 'none' } | undefined): WebhookAuth | null {
  return !auth || auth.type === 'none' ? null : auth;
}

/** The request header the credentials become (none without credentials). */
export function authHeaders(auth: WebhookAuth | null): Record<string, string> {
  if (!auth) return {};
  if (auth.type === 'basic')
    return {
      authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}`,
    };
  if (auth.type === 'bearer') return { authorization: `Bearer ${auth.token}` };
  return { [auth.name.toLowerCase()]: auth.value };
}

/** What answers show: the kind and the non-secret part. */
export function shownAuth(auth: WebhookAuth | null): WebhookAuthShown | null {
  if (!auth) return null;
  if (auth.type === 'basic') return { type: 'basic', username: auth.username };
  if (auth.type === 'bearer') return { type: 'bearer' };
  return { type: 'header', name: auth.name };
}
