import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isIPv6 } from 'node:net';
import { HttpError } from '../http/errors.ts';

/**
 * Open mode (a loopback bind without tokens) trusts whoever can connect, and
 * a web page the engineer visits can connect too: through DNS rebinding
 * (attacker.example now resolves to 127.0.0.1) it reads the API, and with
 * CORS "simple requests" (a form, or fetch with text/plain or no body) it can
 * POST without any preflight. Three checks close that (docs/security.md):
 *
 * - `Host` must name this server (localhost, 127.0.0.1, [::1], the bind
 *   address, ONSET_ALLOWED_HOSTS, ONSET_PUBLIC_URL's host): otherwise 421.
 *   A rebound name is not one of them.
 * - A state-changing request with an `Origin` must come from this very
 *   origin (host and port) or ONSET_PUBLIC_URL's: otherwise 403. Another
 *   loopback port is another origin.
 * - A POST without a bearer token must carry a Content-Type a browser cannot
 *   send cross-origin without a CORS preflight (which Onset never grants):
 *   JSON, protobuf or YAML, not text/plain, a form, or no body. Otherwise 415.
 *
 * With tokens configured the token is the protection (a page cannot attach
 * it), and the first two checks are off: proxies and non-loopback names are
 * then expected.
 */
export interface BrowserGuardOptions {
  /** Open mode: no tokens configured. */
  open: boolean;
  /** The bind address (ONSET_HOST). */
  bindHost: string;
  /** Extra names (and name:port) this server answers to (ONSET_ALLOWED_HOSTS). */
  allowedHosts: string[];
  /** ONSET_PUBLIC_URL: its host is allowed, its origin may send state changes. */
  publicUrl: string | undefined;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The content types a cross-origin page may POST without a preflight (Fetch standard, CORS-safelisted). */
const SIMPLE_TYPES = new Set([
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
]);

/** "Example.COM:8080" → { name: "example.com", port: "8080" }; "[::1]:80" → { name: "[::1]", port: "80" }. */
function splitHost(host: string): { name: string; port: string } {
  const h = host.trim().toLowerCase();
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(h);
  if (!m) return { name: h, port: '' };
  return { name: m[1]!.replace(/\.$/, ''), port: m[2] ?? '' };
}

const bracketed = (name: string) => (isIPv6(name) ? `[${name}]` : name);

function allowedNames(o: BrowserGuardOptions): string[] {
  const names = ['localhost', '127.0.0.1', '[::1]', bracketed(o.bindHost.toLowerCase())];
  for (const h of o.allowedHosts) names.push(splitHost(bracketed(h)).name);
  if (o.publicUrl) {
    try {
      names.push(new URL(o.publicUrl).hostname.toLowerCase());
    } catch {
      /* not a URL: links will be wrong too; nothing to allow */
    }
  }
  return names;
}

function publicOrigin(publicUrl: string | undefined): string | null {
  if (!publicUrl) return null;
  try {
    return new URL(publicUrl).origin.toLowerCase();
  } catch {
    return null;
  }
}

export const browserGuardPlugin = fp(
  async function browserGuard(app: FastifyInstance, o: BrowserGuardOptions) {
    const names = new Set(allowedNames(o));
    const trustedOrigin = publicOrigin(o.publicUrl);

    const checkHost = (request: FastifyRequest) => {
      const host = request.headers.host ?? '';
      if (!names.has(splitHost(host).name))
        throw new HttpError(
          421,
          'misdirected_request',
          `this Onset server does not answer to Host "${host.slice(0, 100)}" (open mode accepts ${[...names].join(', ')}; add names with ONSET_ALLOWED_HOSTS)`,
        );
    };

    const checkOrigin = (request: FastifyRequest) => {
      const origin = request.headers.origin;
      if (origin === undefined) return; // not from a browser page (CLI, agent, SDKs)
      let o: URL | null = null;
      try {
        o = new URL(origin);
      } catch {
        /* "null" (sandboxed frames, file:) or garbage: not this origin */
      }
      const sameOrigin =
        o !== null && o.host.toLowerCase() === (request.headers.host ?? '').toLowerCase();
      if (sameOrigin || (o !== null && o.origin.toLowerCase() === trustedOrigin)) return;
      throw new HttpError(
        403,
        'forbidden',
        `cross-origin request from ${origin.slice(0, 100)} refused: state changes are accepted only from this server's own pages`,
      );
    };

    const checkContentType = (request: FastifyRequest) => {
      if (request.method !== 'POST' || request.headers.authorization) return;
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type && !SIMPLE_TYPES.has(type)) return;
      throw new HttpError(
        415,
        'unsupported_media_type',
        `POST needs Content-Type: application/json (send "{}" for no fields), not ${type || 'no body'}: browsers may send that from any web page`,
      );
    };

    app.addHook('onRequest', async (request) => {
      if (o.open) {
        checkHost(request);
        if (STATE_CHANGING.has(request.method)) checkOrigin(request);
      }
      checkContentType(request);
    });
  },
  { name: 'onset-browser-guard', fastify: '5.x' },
);
