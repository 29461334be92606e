import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError, type Env } from '../lib/config.ts';
import { sendJson } from '../lib/http.ts';

/** Origins whose pages may call the graph from a browser: a list, or any (`*`). */
export interface CorsSettings {
  origins: ReadonlySet<string> | '*';
}

/** Apollo Router's default too: the hosted Apollo Sandbox and Explorer, where partners explore graphs. */
export const DEFAULT_CORS_ORIGINS = 'https://studio.apollographql.com';

export function readCorsSettings(env: Env): CorsSettings {
  const raw = (env.CORS_ORIGINS ?? DEFAULT_CORS_ORIGINS).trim();
  if (raw === '*') return { origins: '*' };
  const origins = new Set<string>();
  for (const entry of raw.split(',').map((part) => part.trim()).filter(Boolean)) {
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    // An origin is a scheme, a host and a port: no path, query, fragment or credentials.
    const isOrigin = url && (url.protocol === 'http:' || url.protocol === 'https:') && url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password && !entry.endsWith('/');
    if (!url || !isOrigin) throw new ConfigError(`CORS_ORIGINS: ${JSON.stringify(entry)} is not an origin such as https://app.example.com (or the whole value *)`);
    origins.add(url.origin);
  }
  return { origins };
}

const ALLOWED_METHODS = 'GET, POST, OPTIONS';
/** What a browser page may read of an answer besides the basic headers: when to retry, and how to authenticate. */
const EXPOSED_HEADERS = 'retry-after, www-authenticate';
/** How long a browser may reuse a preflight's answer, in seconds (Chromium keeps at most 7,200). */
const MAX_AGE_SECONDS = '600';
/** A preflight's `Access-Control-Request-Headers`: header names, comma-separated. */
const HEADER_NAMES = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;

/**
 * Cross-origin requests from browsers (CORS), for frontend apps served from another origin than
 * the gateway. A preflight from an allowed origin is answered here (204: any method the gateway
 * serves, the headers it asked for, which carry the services' credentials); the answer to its
 * request then names that origin. A preflight from any other origin is refused (403 `FORBIDDEN`),
 * and its other requests get no CORS header, so the browser withholds the answers from the page.
 * Credentials travel in headers, never cookies: `Access-Control-Allow-Credentials` is never sent.
 * WebSocket upgrades are not subject to CORS; Apollo's CSRF prevention still applies.
 */
export function createCors({ origins }: CorsSettings) {
  const allows = (origin: string) => origins === '*' || origins.has(origin);
  return {
    /** Answers a preflight, or marks the answer to come for the page's origin; true when it answered. */
    handle(req: IncomingMessage, res: ServerResponse): boolean {
      const origin = req.headers.origin;
      if (origin === undefined) return false;
      const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
      if (!allows(origin)) {
        if (!preflight) return false;
        req.resume();
        sendJson(res, 403, { errors: [{ message: 'this origin may not call the graph from a browser: the gateway allows the origins in CORS_ORIGINS', extensions: { code: 'FORBIDDEN' } }] });
        return true;
      }
      res.setHeader('access-control-allow-origin', origins === '*' ? '*' : origin);
      // The answer differs by origin: a cache must not give one origin's to another.
      if (origins !== '*') res.setHeader('vary', 'Origin');
      if (!preflight) {
        res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
        return false;
      }
      req.resume();
      const requested = req.headers['access-control-request-headers'];
      res.writeHead(204, {
        'access-control-allow-methods': ALLOWED_METHODS,
        ...(typeof requested === 'string' && HEADER_NAMES.test(requested) ? { 'access-control-allow-headers': requested } : {}),
        'access-control-max-age': MAX_AGE_SECONDS,
      });
      res.end();
      return true;
    },
  };
}
