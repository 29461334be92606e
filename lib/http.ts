import { EventEmitter } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { createBoundedCache } from './boundedCache.ts';

/** What every `start*` returns: where it listens and how to stop it. */
export interface Started {
  url: string;
  close(): Promise<void>;
}

/** The body (and WebSocket message) limit of a process that sets none of its own. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export class PayloadTooLargeError extends Error {
  override name = 'PayloadTooLargeError';
  constructor(readonly limitBytes: number) {
    super(`request body exceeds ${limitBytes} bytes`);
  }
}

/** Reads a whole request body, refusing more than `limitBytes` without buffering the excess. */
export function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    req.resume();
    return Promise.reject(new PayloadTooLargeError(limitBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        req.removeAllListeners('data');
        req.resume();
        reject(new PayloadTooLargeError(limitBytes));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * The value without the spaces and tabs around it, as Node's HTTP parser reads a header: what every
 * process takes a credential as, whatever carried it (a loop: a regular expression anchored at the
 * end is quadratic on a long run of spaces).
 */
export function trimmedAsHeader(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value[start] === ' ' || value[start] === '\t')) start += 1;
  while (end > start && (value[end - 1] === ' ' || value[end - 1] === '\t')) end -= 1;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/**
 * Sends `body` as JSON. `mediaType` is for a GraphQL answer whose client asked for
 * `application/graphql-response+json`; an entry of `headers` still overrides it.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, mediaType = 'application/json; charset=utf-8'): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(body === undefined ? {} : { 'content-type': mediaType }),
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendText(res: ServerResponse, status: number, text: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Binds a server and returns its URL and a close that also ends idle keep-alive sockets,
 * so tests and restarts never wait for a client's idle timeout.
 */
export function listen(server: http.Server, port: number, host = '127.0.0.1'): Promise<Started> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
      resolve({
        url: `http://${shownHost}:${address.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
            for (const socket of sockets) socket.destroy();
          }),
      });
    });
  });
}

/** A URL as undici's dispatcher takes it: its origin, and the path with its query. */
export function originAndPath(url: string): { origin: string; path: string } {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

/**
 * Request targets without a query (`/graphql`, `/health`), each parsed once: a URL took 2-3% of
 * the gateway's CPU per request. The URL is shared, so it is read, never changed (a rewrite makes
 * a new one); the last 64 are kept.
 */
const parsedTargets = createBoundedCache<URL>(64);
const MAX_REMEMBERED_TARGET = 256;

/** Parses the request target once; a bad target is the client's error. */
export function requestUrl(req: IncomingMessage): URL | undefined {
  const target = req.url ?? '/';
  const remembered = target.length <= MAX_REMEMBERED_TARGET && !target.includes('?');
  let url = remembered ? parsedTargets.get(target) : undefined;
  if (url) return url;
  try {
    url = new URL(target, 'http://local');
  } catch {
    return undefined;
  }
  if (remembered) parsedTargets.set(target, url);
  return url;
}

/**
 * Something going away, told as an AbortSignal tells it (`aborted`, `reason`, an `abort` event,
 * which undici takes as a request's signal too), without an AbortController: one and its listener
 * cost some 4 µs of every request, and almost none is ever cut off. The AbortSignal itself is made
 * only for a caller that asks for it.
 */
export class Departure extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  private controller: AbortController | undefined;

  constructor() {
    super();
    // One listener per subgraph call in flight for the request, which its plan and demand control
    // bound: past ten is not a leak, and must not print Node's warning that it may be.
    this.setMaxListeners(0);
  }

  /** An AbortSignal aborted with the same reason, made on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Tells it, once. */
  leave(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    this.emit('abort');
  }
}

/** The client's going away: the response's connection closed before the response was written whole. */
export class ClientDeparture extends Departure {
  constructor(res: ServerResponse) {
    super();
    res.once('close', () => {
      if (!res.writableFinished) this.leave(new DOMException('the client went away', 'AbortError'));
    });
  }
}

const NOT_LISTENING = () => {};

/** Calls `leave` once `cancellation` is told, or at once if it already was; the returned function stops listening. */
export function onCancel(cancellation: AbortSignal | Departure, leave: () => void): () => void {
  if (cancellation.aborted) {
    leave();
    return NOT_LISTENING;
  }
  if (cancellation instanceof Departure) {
    cancellation.once('abort', leave);
    return () => cancellation.off('abort', leave);
  }
  cancellation.addEventListener('abort', leave, { once: true });
  return () => cancellation.removeEventListener('abort', leave);
}
