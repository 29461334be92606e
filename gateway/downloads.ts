import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Agent } from 'undici';
import { sendJson } from '../lib/http.ts';
import type { Logger } from '../lib/logger.ts';
import { forwardedHeader, type TrustedProxies } from '../lib/trustedProxies.ts';
import { DOWNLOADS_PATH } from '../lib/downloads.ts';
import { withTraceContext } from '../lib/tracing.ts';

/** Response headers a download passes on; nothing else of the subgraph's answer reaches the browser. `Retry-After` goes with a 429 or 503. */
const PASSED_ON = ['content-type', 'content-length', 'content-disposition', 'cache-control', 'x-content-type-options', 'retry-after'];
const LINK = new RegExp(`^${DOWNLOADS_PATH}([a-z][a-z0-9-]*)/([A-Za-z0-9_-]{1,128})$`);
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * The origin subgraphs build absolute links on: `PUBLIC_URL` when configured (production sets it),
 * else the scheme and host the caller used. `X-Forwarded-Proto` and `X-Forwarded-Host` are believed
 * only from a configured proxy (`TRUSTED_PROXIES`); from anyone else they are ignored, and the
 * socket's own scheme and the `Host` header stand.
 */
export function gatewayOrigin(publicUrl: string | undefined, req: IncomingMessage, proxies: TrustedProxies): string | undefined {
  if (publicUrl) return new URL(publicUrl).origin;
  const host = forwardedHeader(req, proxies, 'x-forwarded-host') ?? req.headers.host;
  if (!host || !HOST.test(host)) return undefined;
  const forwardedProto = forwardedHeader(req, proxies, 'x-forwarded-proto')?.toLowerCase();
  const ownProto = 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http';
  const proto = forwardedProto === 'https' || forwardedProto === 'http' ? forwardedProto : ownProto;
  return `${proto}://${host}`;
}

export interface DownloadProxy {
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
  close(): Promise<void>;
}

/**
 * `GET /downloads/<subgraph>/<id>`: streams the subgraph's `/downloads/<id>` to the browser; `HEAD`
 * answers the same status and headers without the file, any other method 405. The link alone is
 * the authority, so none of the caller's headers travel on (no cookie, no credential), only the
 * request's trace context when traces are on.
 */
export function createDownloadProxy(subgraphUrls: Record<string, string>, logger: Logger): DownloadProxy {
  // No deadline over the whole body, unlike the fetcher's (`SUBGRAPH_TIMEOUT_MS`): a client reading
  // slowly must get the whole file. undici's own timeouts stand (300 s for the headers, and 300 s of
  // silence mid-body, not counted while the client is slow to take what came): the subgraph bounds
  // its service's silence and pace itself, well within them.
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  return {
    async handle(req, res, url) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { message: 'A download link is read with GET or HEAD.' }, { allow: 'GET, HEAD' });
      const match = LINK.exec(url.pathname);
      const subgraphUrl = match && Object.hasOwn(subgraphUrls, match[1]!) ? subgraphUrls[match[1]!] : undefined;
      if (!match || !subgraphUrl) return sendJson(res, 404, { message: 'This download link does not exist.' });
      let response;
      try {
        // The trace context alone travels: the subgraph's download span continues the request's.
        response = await agent.request({ origin: new URL(subgraphUrl).origin, path: `${DOWNLOADS_PATH}${match[2]}`, method: 'GET', headers: withTraceContext({}) });
      } catch (error) {
        logger.warn({ subgraph: match[1], error: (error as { code?: string }).code ?? 'unknown' }, 'download proxy could not reach the subgraph');
        return sendJson(res, 502, { message: 'The file is unavailable right now. Try again later.' });
      }
      const headers: Record<string, string> = {};
      for (const name of PASSED_ON) {
        const value = response.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      res.writeHead(response.statusCode, headers);
      if (req.method === 'HEAD') {
        // The subgraph serves links with GET only, and only its GET knows whether a link is live, expired
        // or gone upstream: its status and headers are the answer. The file is read and dropped up to
        // undici's dump limit (128 KiB) so the connection is kept; a larger one is cut off there.
        res.end();
        await response.body.dump();
        return;
      }
      try {
        await pipeline(response.body, res);
      } catch (error) {
        // The client sees the truncation (its length, or its chunked end, is missing); a client that left is no fault.
        if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') logger.debug({ subgraph: match[1] }, 'download left by its client');
        else logger.warn({ subgraph: match[1], error: (error as NodeJS.ErrnoException).code ?? (error as Error).name }, 'download cut off by the subgraph');
      }
    },
    close: () => agent.close(),
  };
}
