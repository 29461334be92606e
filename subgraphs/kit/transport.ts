import { pipeline, Readable, Transform } from 'node:stream';
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import type { GraphQLError } from 'graphql';
import type { Logger } from '../../lib/logger.ts';
import { scrub } from '../../lib/redact.ts';
import { AnswerBrokeOff, AnswerTooLarge, eitherWatch, exchangeBuffered, type BufferedAnswer, type WatchDeadline } from '../../lib/bufferedExchange.ts';
import { createDeadlines, type Deadline } from '../../lib/deadlines.ts';
import { ErrorCode, errorForUpstream, graphError, scrubError } from './errors.ts';
import { cancelledCall, type CallScope } from './callScope.ts';
import { hasDotSegment } from './paths.ts';

export type QueryValue = string | number | boolean | null | undefined | readonly string[];

export type RestBody =
  | { json: unknown }
  | { form: Record<string, string | readonly string[]> }
  | { multipart: FormData }
  | { raw: string | Buffer; contentType: string };

export interface RestCall {
  /** A stable name for logs and metrics, such as `getReward`. */
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the base URL, already percent-encoded, starting with `/`; or an absolute URL the upstream handed out. */
  path: string;
  query?: Record<string, QueryValue>;
  headers?: Record<string, string>;
  body?: RestBody;
  /** @default 'application/json' */
  accept?: string;
  /** Credential values sent with this call, scrubbed from anything reported. */
  secrets?: readonly string[];
  /** Override of the per-call deadline. */
  timeoutMs?: number;
  /** The path is a page token or URL the upstream handed out: its refusal is `CURSOR_EXPIRED`. */
  followsCursor?: boolean;
  /**
   * Rewrites a failure's body into a shape the error table reads (`{message, fields}`), for a
   * service that words its errors its own way. The body is the parsed JSON, or the text.
   */
  errorBody?: (body: unknown) => unknown;
  /** The GraphQL request the call serves: each attempt counts against its budget, and its cancellation stops the call. */
  scope?: CallScope;
  /**
   * Failure statuses handed back as answers instead of errors, for a service that means different
   * things by one status (the messaging service's empty 400 against its `{status: "fail"}` 400).
   */
  answers?: readonly number[];
}

export interface RestResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** Parsed JSON; undefined for an empty or non-JSON body. */
  body: unknown;
  text: string;
}

export interface StreamResponse {
  status: number;
  headers: Record<string, string>;
  /** Fails once the body passes the call's cap. */
  body: Readable;
}

export interface UpstreamObservation {
  service: string;
  operation: string;
  method: string;
  status: number | 'error';
  durationMs: number;
  attempt: number;
}

export interface RestTransportOptions {
  /** Service name, as it appears in errors, logs and metrics. */
  service: string;
  /** The service's base URL: origin plus any path prefix the API lives under. */
  baseUrl: string;
  logger?: Logger;
  /** Deadline for one call, retries included. @default 10000 */
  timeoutMs?: number;
  /** Further attempts for idempotent calls. @default 2 */
  retries?: number;
  /** First backoff; doubled each retry, with jitter. @default 50 */
  backoffMs?: number;
  /** Sockets per upstream origin. @default 64 */
  connections?: number;
  /** The longest answer body read from the service; a longer one is `UPSTREAM_ERROR`, never buffered past this. @default 10 MiB */
  maxResponseBytes?: number;
  /** The longest body `stream` passes through (downloads are not buffered); past it the stream fails. @default 100 MiB */
  maxDownloadBytes?: number;
  observe?: (observation: UpstreamObservation) => void;
  /** Waits for the call's turn under the service's published rate before every attempt; returns what to call, with the status, once the attempt is over (`subgraphs/kit/pacing.ts`). */
  pace?: (call: RestCall, deadlineAt: number) => ((status?: number) => void) | Promise<(status?: number) => void>;
}

export interface RestTransport {
  readonly service: string;
  /** A call whose non-2xx outcome is an error. */
  request(call: RestCall): Promise<RestResponse>;
  /** A lookup by id: 404 resolves to null. */
  lookup(call: RestCall): Promise<RestResponse | null>;
  /** A call whose 2xx body is streamed to the caller (downloads). */
  stream(call: RestCall): Promise<StreamResponse>;
  close(): Promise<void>;
}

/** RFC 9110 idempotent methods: a repeat has the same effect as one call. POST is never retried. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const RETRY_STATUS = new Set([502, 503, 504]);
/** Failures where the request cannot have been processed, or the connection broke: safe to repeat when idempotent. */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT']);

function errorCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_ABORTED') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The request line servers commonly accept (8 KiB, less the method and protocol): a longer target,
 * made of a caller's values, would be refused upstream with 414 or 431 after a call for nothing.
 */
const MAX_REQUEST_TARGET_CHARS = 8000;

function encodeQuery(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const item of value) params.append(name, item);
    else params.append(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

const NO_BODY: { payload?: string | Buffer; contentType?: string } = {};

async function encodeBody(body: RestBody): Promise<{ payload?: string | Buffer; contentType?: string }> {
  if ('json' in body) return { payload: JSON.stringify(body.json), contentType: 'application/json' };
  if ('form' in body) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(body.form)) {
      if (Array.isArray(value)) for (const item of value) params.append(name, item);
      else params.append(name, value as string);
    }
    return { payload: params.toString(), contentType: 'application/x-www-form-urlencoded' };
  }
  if ('multipart' in body) {
    // undici's dispatcher takes bytes, not FormData: let the WHATWG encoder pick the boundary.
    const encoded = new Response(body.multipart);
    return { payload: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type') ?? 'multipart/form-data' };
  }
  return { payload: body.raw, contentType: body.contentType };
}

/** undici names headers in lower case; a repeated one, an array, is joined as HTTP folds it. */
function flattenHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  // Most answers repeat no header and leave none undefined: they are used as they came, not copied.
  for (const name in headers) {
    if (typeof headers[name] !== 'string') return flattenedCopy(headers);
  }
  return headers as Record<string, string>;
}

function flattenedCopy(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function parseJson(text: string): unknown {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const ABSOLUTE_URL = /^https?:\/\//i;
/** The default cap on an upstream answer's body. */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** The default cap on a streamed download (a label PDF). */
export const DEFAULT_MAX_DOWNLOAD_BYTES = 100 * 1024 * 1024;
const NOTHING_TO_DISCARD = async () => {};

/** Waits before a retry; a cancelled request stops waiting at once. */
const sleep = (ms: number, scope?: CallScope) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    const unwatch = scope?.watch(done);
    function done() {
      clearTimeout(timer);
      unwatch?.();
      resolve();
    }
  });

/** A retry the request's budget cannot pay for is not tried: the caller gets the upstream's own answer. */
const budgetLeft = (scope: CallScope | undefined) => scope === undefined || scope.calls < scope.budget;

/** The deadline's watch, also cancelled by the request's cancellation. */
function watchWith(watch: WatchDeadline, scope: CallScope | undefined): WatchDeadline {
  return scope ? eitherWatch(watch, (cancel) => scope.watch(cancel)) : watch;
}

/** A stream that passes `body` through and fails with `tooLarge()` once more than `maxBytes` went by. */
function capped(body: Readable, maxBytes: number, tooLarge: () => Error): Readable {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > maxBytes ? tooLarge() : null, chunk);
    },
  });
  // Either side failing ends both: the upstream socket is let go with the download.
  pipeline(body, counter, () => {});
  return counter;
}

/** The first `maxBytes` of a body as text; the rest is never read. */
async function readCapped(body: Readable, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk.subarray(0, maxBytes - length));
    length += chunks.at(-1)!.length;
    if (length >= maxBytes) break;
  }
  body.destroy();
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The one way a subgraph speaks HTTP to its upstream: a keep-alive pool per origin, a deadline on
 * every call, retries only where repeating cannot change the outcome, and the kit's error table.
 */
export function createRestTransport(options: RestTransportOptions): RestTransport {
  const { service, logger, timeoutMs = 10_000, retries = 2, backoffMs = 50, connections = 64, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES, maxDownloadBytes = DEFAULT_MAX_DOWNLOAD_BYTES, observe, pace } = options;
  // Building a log line's fields costs even when the level drops it; reads are per call.
  const debugging = () => logger?.isLevelEnabled('debug') === true;
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  // Read once: a URL's origin is computed anew at every read.
  const baseOrigin = base.origin;
  const pools = new Map<string, Pool>();

  function poolFor(origin: string): Pool {
    let pool = pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, { connections, keepAliveTimeout: 30_000, pipelining: 1 });
      pools.set(origin, pool);
    }
    return pool;
  }

  function unavailable(call: RestCall, detail: string): GraphQLError {
    return graphError(`${service} is unavailable: ${scrub(detail, call.secrets ?? [])}`, { code: ErrorCode.UpstreamUnavailable, service });
  }

  /** Its length only: the target holds the caller's values, and on some services a credential. */
  function targetTooLong(call: RestCall, length: number): GraphQLError {
    return graphError(`${service}.${call.operation}: the arguments make an upstream request target of ${length} characters, more than the ${MAX_REQUEST_TARGET_CHARS} servers commonly accept`, { code: ErrorCode.BadUserInput, service });
  }

  function tooLarge(maxBytes: number, status: number | undefined): GraphQLError {
    return graphError(`${service}: the answer is larger than the ${maxBytes} bytes this graph reads from it`, { code: ErrorCode.UpstreamError, service, ...(status ? { status } : {}) });
  }

  /**
   * One call, tried again only where repeating cannot change the outcome, within its deadline.
   * `perform` makes one attempt; `discard` lets go of an answer that is about to be retried.
   */
  async function exchange<T extends { status: number }>(
    call: RestCall,
    deadline: Deadline,
    perform: (pool: Pool, options: Dispatcher.DispatchOptions) => Promise<T>,
    discard: (answer: T) => Promise<unknown>,
  ): Promise<T> {
    // The last guard behind `restPath`: a dot segment would call another endpoint than the one meant.
    if (hasDotSegment(call.path)) throw new Error(`${service}.${call.operation}: the upstream path holds a dot segment; build paths with restPath`);
    const target = ABSOLUTE_URL.test(call.path) ? new URL(call.path) : undefined;
    const origin = target ? target.origin : baseOrigin;
    const path = target ? `${target.pathname}${target.search}` : `${basePath}${call.path}`;
    const fullPath = `${path}${encodeQuery(call.query)}`.replace('?&', '?');
    if (fullPath.length > MAX_REQUEST_TARGET_CHARS) throw targetTooLong(call, fullPath.length);
    const { payload, contentType } = call.body ? await encodeBody(call.body) : NO_BODY;
    const headers: Record<string, string> = { accept: call.accept ?? 'application/json', ...call.headers };
    if (contentType) headers['content-type'] = contentType;

    const canRetry = IDEMPOTENT.has(call.method);
    const scope = call.scope;
    for (let attempt = 1; ; attempt += 1) {
      // Retries wait for their turn too; a call whose turn comes too late is refused unsent.
      const paced = pace ? await pace(call, deadline.at) : undefined;
      const remaining = deadline.at - Date.now();
      if (remaining <= 0 || !budgetLeft(scope) || scope?.aborted) paced?.(); // not sent after all: the slot goes back
      if (remaining <= 0) throw unavailable(call, `no answer within ${call.timeoutMs ?? timeoutMs} ms`);
      // Every attempt is a call upstream: it counts against the request's budget, and is not made once the request is cancelled.
      scope?.take(service);
      const started = performance.now();
      try {
        const answer = await perform(poolFor(origin), { method: call.method, path: fullPath, headers, body: payload, headersTimeout: remaining, bodyTimeout: remaining });
        paced?.(answer.status);
        const durationMs = performance.now() - started;
        observe?.({ service, operation: call.operation, method: call.method, status: answer.status, durationMs, attempt });
        if (debugging()) logger!.debug({ service, operation: call.operation, method: call.method, status: answer.status, ms: Math.round(durationMs), attempt }, 'upstream call');
        if (canRetry && RETRY_STATUS.has(answer.status) && attempt <= retries && budgetLeft(scope) && deadline.at - Date.now() > backoffMs * 2 ** (attempt - 1)) {
          await discard(answer);
          await sleep(backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random()), scope);
          continue;
        }
        return answer;
      } catch (caught) {
        paced?.();
        const durationMs = performance.now() - started;
        observe?.({ service, operation: call.operation, method: call.method, status: 'error', durationMs, attempt });
        if (caught instanceof AnswerTooLarge) throw tooLarge(caught.maxBytes, caught.status);
        const brokeOff = caught instanceof AnswerBrokeOff;
        const error = brokeOff ? caught.reason : caught;
        const code = errorCode(error);
        const timedOut =
          (error as Error)?.name === 'TimeoutError' ||
          (error as Error)?.name === 'AbortError' ||
          error instanceof undiciErrors.HeadersTimeoutError ||
          error instanceof undiciErrors.BodyTimeoutError;
        if (debugging()) logger!.debug({ service, operation: call.operation, method: call.method, error: code ?? (timedOut ? 'timeout' : 'unknown'), attempt }, 'upstream call failed');
        if (scope?.aborted) throw cancelledCall(service);
        if (timedOut) throw unavailable(call, `no answer within ${call.timeoutMs ?? timeoutMs} ms`);
        if (canRetry && code && CONNECTION_ERRORS.has(code) && attempt <= retries && budgetLeft(scope)) {
          const wait = backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random());
          if (deadline.at - Date.now() > wait) {
            await sleep(wait, scope);
            continue;
          }
        }
        throw unavailable(call, brokeOff ? `the answer broke off (${code ?? 'read error'})` : `connection failed (${code ?? (error as Error)?.name ?? 'unknown'})`);
      }
    }
  }

  const deadlines = createDeadlines();
  const deadlineOf = (call: RestCall) => deadlines(call.timeoutMs ?? timeoutMs);

  async function complete(call: RestCall, lookup: boolean): Promise<RestResponse | null> {
    const deadline = deadlineOf(call);
    let answer: BufferedAnswer;
    try {
      answer = await exchange(call, deadline, (pool, options) => exchangeBuffered(pool, options, watchWith(deadline.watch, call.scope), maxResponseBytes), NOTHING_TO_DISCARD);
    } finally {
      deadline.release();
    }
    const { status, body: text } = answer;
    const headers = flattenHeaders(answer.headers);
    const body = parseJson(text);
    if (status >= 200 && status < 300) {
      // A maintenance page served with 200 is a failure, not an empty result.
      // A body that parsed is not trimmed a second time (`parseJson` did it once).
      if (body === undefined && text.trim() && (call.accept ?? 'application/json').includes('json')) {
        throw graphError(`${service}: the answer was not valid JSON`, { code: ErrorCode.UpstreamError, service, status });
      }
      return { status, headers, body, text };
    }
    if (call.answers?.includes(status)) return { status, headers, body, text };
    const error = errorForUpstream({ service, status, body: call.errorBody ? call.errorBody(body ?? text) : body ?? text, retryAfter: headers['retry-after'], lookup, cursor: call.followsCursor, secrets: call.secrets ?? [] });
    if (!error) return null;
    throw scrubError(error, call.secrets ?? []);
  }

  /** One attempt whose body is handed over as a stream, cancelled by the deadline until the stream closes. */
  function performStreamed(deadline: Deadline, scope: CallScope | undefined) {
    return async (pool: Pool, options: Dispatcher.DispatchOptions) => {
      const controller = new AbortController();
      const unwatch = watchWith(deadline.watch, scope)((reason) => controller.abort(reason));
      try {
        const response = await pool.request({ ...options, signal: controller.signal });
        response.body.once('close', unwatch);
        return { status: response.statusCode, response };
      } catch (error) {
        unwatch();
        throw error;
      }
    };
  }

  return {
    service,
    // `complete` answers null only for a lookup's 404.
    request: (call) => complete(call, false) as Promise<RestResponse>,
    lookup: (call) => complete(call, true),
    async stream(call) {
      const deadline = deadlineOf(call);
      let response: Dispatcher.ResponseData;
      try {
        ({ response } = await exchange(call, deadline, performStreamed(deadline, call.scope), (answer) => answer.response.body.dump()));
      } catch (error) {
        deadline.release();
        throw error;
      }
      const headers = flattenHeaders(response.headers);
      if (response.statusCode >= 200 && response.statusCode < 300) {
        if (Number(headers['content-length']) > maxDownloadBytes) {
          response.body.destroy();
          deadline.release();
          throw tooLarge(maxDownloadBytes, response.statusCode);
        }
        // The deadline bounds the download too: it is over when the body closes, read or not.
        response.body.once('close', deadline.release);
        return { status: response.statusCode, headers, body: capped(response.body, maxDownloadBytes, () => tooLarge(maxDownloadBytes, response.statusCode)) };
      }
      // An error answer is read only up to the cap, then let go.
      const text = await readCapped(response.body, maxResponseBytes).catch(() => '');
      deadline.release();
      const error = errorForUpstream({ service, status: response.statusCode, body: parseJson(text) ?? text, retryAfter: headers['retry-after'], secrets: call.secrets ?? [] })!;
      throw scrubError(error, call.secrets ?? []);
    },
    async close() {
      await Promise.all([...pools.values()].map((pool) => pool.close()));
      pools.clear();
    },
  };
}
