/**
 * A receiver's URL often is its secret: Slack's and Discord's incoming-webhook URLs carry their
 * token as a path segment, others take `?token=` or `?key=`. The API shows where a webhook
 * points without handing its secret to every admin-scoped reader (or a screen share): segments
 * and query values that look like tokens keep only their last four characters.
 */

/** Long, or mixing letters and digits at a token's length: a credential, not a route word. */
function looksLikeToken(part: string): boolean {
  if (part.length >= 24) return /^[A-Za-z0-9_\-.~%+=]+$/.test(part);
  return part.length >= 16 && /[A-Za-z]/.test(part) && /\d/.test(part);
}

const mask = (part: string) => `…${part.slice(-4)}`;

export function redactWebhookUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return '…';
  }
  const path = u.pathname
    .split('/')
    .map((seg) => (looksLikeToken(seg) ? mask(seg) : seg))
    .join('/');
  const query = [...u.searchParams]
    .map(([k, v]) => `${encodeURIComponent(k)}=${v.length >= 8 ? mask(v) : encodeURIComponent(v)}`)
    .join('&');
  return `${u.protocol}//${u.host}${path}${query ? `?${query}` : ''}`;
}
