import type { IncomingMessage, ServerResponse } from 'node:http';
import compression from 'compression';

/** Answers shorter than this go as they are: compressing them saves less than it costs. */
const THRESHOLD_BYTES = 1024;
const COMPRESSING = /\b(?:gzip|br|deflate)\b/i;

type Middleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * Answers compressed (brotli at quality 4, gzip or deflate, as the client prefers) for clients that
 * ask, as browsers always do: a 35 KB leaderboard leaves as about a tenth of that. The `compression`
 * middleware wraps the response's writes; a request that accepts no compression (a server calling
 * the graph, the benchmark) is not wrapped at all. Event streams are never compressed (the caller
 * leaves them out): a compressor holds bytes back until it has enough, and events must leave at once.
 */
export function createCompression(enabled: boolean): (req: IncomingMessage, res: ServerResponse) => void {
  const middleware = compression({ threshold: THRESHOLD_BYTES }) as unknown as Middleware;
  return (req, res) => {
    const accepted = req.headers['accept-encoding'];
    if (!enabled || accepted === undefined || !COMPRESSING.test(accepted)) return;
    middleware(req, res, () => undefined);
  };
}
