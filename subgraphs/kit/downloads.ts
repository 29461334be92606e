import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { GraphQLError } from 'graphql';
import { sendJson } from '../../lib/http.ts';
import type { Logger } from '../../lib/logger.ts';
import { DOWNLOADS_PATH } from '../../lib/downloads.ts';
import type { SubgraphRoute } from './server.ts';

/**
 * A download link's id is random and unguessable; what it stands for (including the caller's
 * credential) stays server-side until it expires, so the URL itself carries nothing secret: in the
 * subgraph's memory, or with `REDIS_URL` in Redis (`./redisDownloads.ts`) so any replica serves it.
 */
export { DOWNLOADS_PATH, GATEWAY_ORIGIN_HEADER } from '../../lib/downloads.ts';

const ID = /^[A-Za-z0-9_-]{32,64}$/;

/** A new link's id: 192 random bits. */
export const newDownloadId = (): string => randomBytes(24).toString('base64url');

export interface DownloadStore<T> {
  issue(value: T): Promise<{ id: string; expiresAt: number }>;
  /** The value behind a live id; `expired` while a dead one is still remembered (one more lifetime). */
  find(id: string): Promise<T | 'expired' | undefined>;
  close(): Promise<void>;
}

export interface DownloadStoreOptions {
  /** How long a link works. */
  ttlMs: number;
  /** @default Date.now */
  now?: () => number;
  /** Links kept at most; the oldest go first. @default 10000 */
  maxEntries?: number;
}

export function createDownloadStore<T>({ ttlMs, now = Date.now, maxEntries = 10_000 }: DownloadStoreOptions): DownloadStore<T> {
  const entries = new Map<string, { value: T; expiresAt: number }>();
  // An expired id answers `expired` for one more lifetime, then is forgotten.
  const sweep = () => {
    for (const [id, entry] of entries) if (now() > entry.expiresAt + ttlMs) entries.delete(id);
  };
  return {
    async issue(value) {
      sweep();
      while (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
      const id = newDownloadId();
      const expiresAt = now() + ttlMs;
      entries.set(id, { value, expiresAt });
      return { id, expiresAt };
    },
    async find(id) {
      const entry = entries.get(id);
      if (!entry) return undefined;
      return now() > entry.expiresAt ? 'expired' : entry.value;
    },
    async close() {
      entries.clear();
    },
  };
}

/** The absolute link on the gateway's origin; relative when the subgraph was reached without the gateway. */
export function downloadUrl(gatewayOrigin: string | undefined, subgraph: string, id: string): string {
  return `${gatewayOrigin ?? ''}${DOWNLOADS_PATH}${encodeURIComponent(subgraph)}/${id}`;
}

function originOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text.replace(/\/+$/, '') ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The last header value read and its origin. Every request through one gateway sends the same value:
 * parsing it into a URL each time was about 1 µs of every marketplace request.
 */
let lastOrigin: { text: string; origin: string | undefined } | undefined;

/** The gateway origin header's value when it is a bare http(s) origin, else undefined. */
export function gatewayOriginOf(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (lastOrigin?.text !== text) lastOrigin = { text, origin: originOf(text) };
  return lastOrigin.origin;
}

export interface DownloadFile {
  contentType: string;
  filename: string;
  body: Readable;
  contentLength?: string;
}

/**
 * The subgraph's `GET /downloads/<id>` route: streams the file behind a live id, and answers an
 * expired or unknown id with 410 or 404 and a message a person can read.
 */
export function downloadRoute<T>(store: DownloadStore<T>, open: (value: T) => Promise<DownloadFile>, logger: Logger): SubgraphRoute {
  return {
    method: 'GET',
    path: `${DOWNLOADS_PATH}*`,
    async handler(_req, res, url) {
      const id = url.pathname.slice(DOWNLOADS_PATH.length);
      let value: T | 'expired' | undefined;
      try {
        value = ID.test(id) ? await store.find(id) : undefined;
      } catch (error) {
        logger.warn({ error: (error as Error).message }, 'download link store unavailable');
        return sendJson(res, 503, { message: 'Download links cannot be read right now. Try again shortly.' }, { 'retry-after': '1' });
      }
      if (value === undefined) return sendJson(res, 404, { message: 'This download link does not exist. Ask the graph for a new one.' });
      if (value === 'expired') return sendJson(res, 410, { message: 'This download link has expired. Ask the graph for a new one.' });
      let file: DownloadFile;
      try {
        file = await open(value);
      } catch (error) {
        const status = error instanceof GraphQLError ? error.extensions.status : undefined;
        logger.warn({ code: error instanceof GraphQLError ? error.extensions.code : 'unknown', status }, 'download failed upstream');
        return status === 404
          ? sendJson(res, 404, { message: 'The file no longer exists upstream.' })
          : sendJson(res, 502, { message: 'The upstream service could not provide the file. Try again later.' });
      }
      res.writeHead(200, {
        'content-type': file.contentType,
        'content-disposition': `attachment; filename="${file.filename.replace(/[^\w.-]/g, '_')}"`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        ...(file.contentLength ? { 'content-length': file.contentLength } : {}),
      });
      await pipeline(file.body, res);
    },
  };
}
