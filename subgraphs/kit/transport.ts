import { hash, randomBytes } from 'node:crypto';
import { pipeline, Readable, Transform } from 'node:stream';
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { GraphQLError } from 'graphql';
import type { Logger } from '../../lib/logger.ts';
import { scrub } from '../../lib/redact.ts';
import { AnswerBrokeOff, AnswerTooLarge, eitherWatch, exchangeBuffered, type BufferedAnswer, type WatchDeadline } from '../../lib/bufferedExchange.ts';
import { createDeadlines, type Deadline } from '../../lib/deadlines.ts';
import { ErrorCode, errorForUpstream, graphError, scrubError } from './errors.ts';
import { WriteOutcome } from '../../lib/errors.ts';
import { cancelledCall, type CallScope } from './callScope.ts';
import { hasDotSegment } from './paths.ts';
import { callerOf, PUBLISHED_RATES } from '../../lib/upstreamRates.ts';
import type { CounterSeries } from '../../lib/plainMetrics.ts';

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
  /**
   * Connections of one origin that one caller (a credential; the service's own calls, made with
   * none, are one caller too) may hold at once; its further calls wait their turn in its own queue
   * (`<SERVICE>_CONNECTIONS_PER_CALLER`).
   * @default all of `connections` but an eighth (56 of 64), at least 1
   */
  connectionsPerCaller?: number;
  /**
   * Calls one caller may have waiting for a connection of one origin; past it, `RATE_LIMITED` at
   * once (`<SERVICE>_MAX_WAITING_PER_CALLER`; 0: a call that would wait is refused).
   * @default 16 × `connections`
   */
  maxWaitingPerCaller?: number;
  /** Told of the connection gate's waits and refusals (the subgraph's metrics, `lib/metrics.ts`). */
  observeGate?: ConnectionGateObserver;
  /** The longest answer body read from the service; a longer one is `UPSTREAM_ERROR`, never buffered past this. @default 10 MiB */
  maxResponseBytes?: number;
  /** The longest body `stream` passes through (downloads are not buffered); past it the stream fails. @default 100 MiB */
  maxDownloadBytes?: number;
  observe?: (observation: UpstreamObservation) => void;
  /** Waits for the call's turn under the service's published rate before every attempt; returns what to call, with the status, once the attempt is over (`subgraphs/kit/pacing.ts`). */
  pace?: (call: RestCall, deadlineAt: number) => ((status?: number) => void) | Promise<(status?: number) => void>;
}

/** What the connection gate tells of its waits and refusals: never who the caller was. */
export interface ConnectionGateObserver {
  /** A call had to wait for a connection: its caller held its share, or every connection was busy. */
  waited: CounterSeries;
  /** A call refused at once with `RATE_LIMITED`: its caller already had the most calls waiting. */
  queueFull: CounterSeries;
  /** A call refused unsent: less than half its deadline was left when a connection came free for it, or none came free. */
  tooLate: CounterSeries;
  /** Handed once what counts the calls waiting now, in every gate of the transport: read when the metrics are scraped. */
  watchWaiting(count: () => number): void;
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
/**
 * A proxy in front of the service answering for it: the request went on and the service's answer
 * was lost (502) or late (504), so it may have acted. Not 503: a service or balancer answers it for
 * a request it did not handle (overload, maintenance, no backend), which is why it is retried.
 */
const UNANSWERED_STATUS = new Set([502, 504]);

/**
 * What the attempts of one write left unsaid: set once an attempt reached the service and brought
 * back nothing that tells what the service did (no answer, a 502 or a 504).
 */
interface WriteTrail {
  unanswered: boolean;
}

/**
 * Tells when a write is handed to a connected socket, undici's `onRequestStart`: a write that fails
 * before it (refused, no address, no free socket before the deadline) never reached the service.
 */
class SendingMark implements Dispatcher.DispatchHandler {
  constructor(
    private readonly handler: Dispatcher.DispatchHandler,
    private readonly attempt: { sent: boolean },
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.attempt.sent = true;
    this.handler.onRequestStart?.(controller, context);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Dispatcher.ResponseData['headers'], statusMessage?: string): void {
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: Dispatcher.ResponseData['headers']): void {
    this.handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.handler.onResponseError?.(controller, error);
  }
}

/**
 * What a DELETE answers when an earlier attempt carried it out and lost its answer, and the retry
 * found nothing left to delete: no content, as the service's own answer is gone with that attempt.
 */
const deleted = (): RestResponse => ({ status: 204, headers: {}, body: undefined, text: '' });

/**
 * The error with what the client must know before it sends the write again; the credential
 * scrubbing already done stays done, as nothing of the call is added.
 */
function withWriteOutcome(error: unknown, service: string, outcome: WriteOutcome): unknown {
  if (!(error instanceof GraphQLError) || error.extensions.writeOutcome !== undefined) return error;
  const advice =
    outcome === WriteOutcome.Applied
      ? `${service} applied the write, but its answer could not be read: read before sending it again`
      : `the request was sent, and ${service} may have applied the write: read before sending it again`;
  return new GraphQLError(`${error.message}; ${advice}`, { path: error.path, extensions: { ...error.extensions, writeOutcome: outcome } });
}

/**
 * Failures that say nothing of the service: the call was never sent (its deadline passed while it
 * waited for its turn or for a connection, or it was refused for its caller's share), or it was sent
 * with less than half its deadline left and that was too little. Its breaker does not count them
 * (`subgraphs/kit/upstreamBreaker.ts`). A set of the errors themselves: nothing is added to what a
 * client sees, and nothing is allocated for a call that does not fail so.
 */
const NOT_THE_SERVICE = new WeakSet<object>();

/** Whether the transport failed `error` itself, before the service had the call for half its deadline. */
export const saysNothingOfService = (error: unknown): boolean => typeof error === 'object' && error !== null && NOT_THE_SERVICE.has(error);

function notTheService<E extends object>(error: E): E {
  NOT_THE_SERVICE.add(error);
  return error;
}

const NOT_WATCHING = () => {};
const NOT_COUNTED: CounterSeries = { inc() {} };
const NOT_OBSERVED = { waited: NOT_COUNTED, queueFull: NOT_COUNTED, tooLate: NOT_COUNTED };

/** Of fixed length, so that no two credentials hash the same text. */
const CALLER_SECRET = randomBytes(32).toString('base64');
const callerKeys = new WeakMap<CallScope, { credential: string; key: string }>();
/** The key of the calls made with no credential (the service's own): one caller of their own. */
const NO_CALLER = '';

/**
 * The key a caller is known by: a SHA-256 of a secret drawn at start and its credential, so that no
 * credential is ever a key. Not an HMAC: the key only tells callers apart, nothing is ever
 * verified against it, and the one-shot hash costs a fifth of `createHmac` (0.3 µs against 1.6 on
 * the benchmark's machine, 4% of the recognition subgraph's CPU per `reward`). It is made once per
 * request's scope and credential, and the connection gate and the pacer (`subgraphs/kit/pacing.ts`)
 * share it. Only the caller's own calls ever see it: never a label, a log line or an error.
 */
export function callerKeyOf(credential: string | undefined, scope: CallScope | undefined): string {
  if (!credential) return NO_CALLER;
  const known = scope && callerKeys.get(scope);
  if (known && known.credential === credential) return known.key;
  const key = hash('sha256', CALLER_SECRET + credential, 'base64url');
  if (scope) callerKeys.set(scope, { credential, key });
  return key;
}

/** One caller's calls to one origin: how many hold a connection, and those waiting for one, first in first out. */
class Holder {
  inFlight = 0;
  readonly waiting: Waiting[] = [];
  /** In its gate's turns: it has calls waiting. */
  queued = false;
}

/** A call waiting for a connection. */
class Waiting {
  unwatch: () => void = NOT_WATCHING;
  constructor(
    readonly holder: Holder,
    /** Past this it is not sent: less than half its deadline would be left. */
    readonly latestStart: number,
    /** Its deadline, for the refusal's message. */
    readonly timeoutMs: number,
    readonly resolve: () => void,
    readonly reject: (error: unknown) => void,
  ) {}
}

/**
 * The connections to one origin, shared fairly by the callers (`connectionsPerCaller`): a call
 * whose caller already holds its share, or that finds every connection busy, waits in its caller's
 * queue, first in first out, and the callers with calls waiting take the connections that come
 * free in turn. So one caller's slow calls never hold more than its share, and another caller finds
 * a connection free at once. undici's pool is never asked for more connections than it has, so it
 * queues nothing: a call the gate lets go is a call sent, and a call still in the gate was not.
 *
 * A waiting call is sent only while at least half its deadline is left: later, the service would
 * have too little of it for its silence to say anything, and the call would most likely be given
 * up on after the service had begun to work on it. It is refused unsent then (when a connection
 * comes free for it, or at its deadline), as is a call past its caller's bound on waiting calls.
 * The fast path is a Map lookup and two counters.
 */
class ConnectionGate {
  inFlight = 0;
  private readonly holders = new Map<string, Holder>();
  /** Callers with calls waiting, in the order they take the next free connection. */
  private readonly turns: Holder[] = [];
  private sweepAt = 1024;

  constructor(
    private readonly service: string,
    private readonly connections: number,
    private readonly share: number,
    private readonly maxWaiting: number,
    private readonly observer: Pick<ConnectionGateObserver, 'waited' | 'queueFull' | 'tooLate'>,
  ) {}

  /** Calls waiting now; the callers in `turns` are those with calls waiting. */
  waitingNow(): number {
    let count = 0;
    for (const holder of this.turns) count += holder.waiting.length;
    return count;
  }

  holderOf(key: string): Holder {
    let holder = this.holders.get(key);
    if (!holder) {
      if (this.holders.size >= this.sweepAt) this.sweep();
      holder = new Holder();
      this.holders.set(key, holder);
    }
    return holder;
  }

  /** A connection at once, when the caller is under its share, none of its calls waits and one is free. */
  take(holder: Holder): boolean {
    if (holder.inFlight >= this.share || this.inFlight >= this.connections || holder.waiting.length > 0) return false;
    holder.inFlight += 1;
    this.inFlight += 1;
    return true;
  }

  /**
   * Waits in the caller's queue until a connection is its (it then holds it), or fails unsent: its
   * caller waiting for too many already, less than half its deadline left, or its request cancelled.
   */
  wait(holder: Holder, deadline: Deadline, timeoutMs: number, scope: CallScope | undefined): Promise<void> {
    if (holder.waiting.length >= this.maxWaiting) return Promise.reject(this.tooManyWaiting(holder));
    const latestStart = deadline.at - timeoutMs / 2;
    if (Date.now() >= latestStart) return Promise.reject(this.tooLate(holder, timeoutMs));
    this.observer.waited.inc();
    return new Promise<void>((resolve, reject) => {
      const waiting = new Waiting(holder, latestStart, timeoutMs, resolve, reject);
      holder.waiting.push(waiting);
      if (!holder.queued) {
        holder.queued = true;
        this.turns.push(holder);
      }
      // The deadline's shared timer, not one of its own; and the request's cancellation.
      waiting.unwatch = watchWith(deadline.watch, scope)(() => this.leave(waiting, scope));
    });
  }

  /** A call holding a connection is over: the connection goes to the next caller in turn. */
  release(holder: Holder): void {
    holder.inFlight -= 1;
    this.inFlight -= 1;
    if (this.turns.length > 0) this.pump();
  }

  private pump(): void {
    const turns = this.turns;
    const now = Date.now();
    let index = 0;
    while (this.inFlight < this.connections && index < turns.length) {
      const holder = turns[index]!;
      if (holder.inFlight >= this.share) {
        index += 1;
        continue;
      }
      const waiting = holder.waiting.shift()!;
      waiting.unwatch();
      if (holder.waiting.length === 0) {
        holder.queued = false;
        turns.splice(index, 1);
      }
      if (now >= waiting.latestStart) {
        waiting.reject(this.tooLate(holder, waiting.timeoutMs));
        continue;
      }
      holder.inFlight += 1;
      this.inFlight += 1;
      // Its turn is taken: behind the other callers waiting.
      if (holder.queued) turns.push(turns.splice(index, 1)[0]!);
      waiting.resolve();
    }
  }

  /** The deadline passed, or the request was cancelled, while the call waited: it leaves unsent. */
  private leave(waiting: Waiting, scope: CallScope | undefined): void {
    const { holder } = waiting;
    const position = holder.waiting.indexOf(waiting);
    if (position < 0) return;
    waiting.unwatch();
    holder.waiting.splice(position, 1);
    if (holder.waiting.length === 0 && holder.queued) {
      holder.queued = false;
      this.turns.splice(this.turns.indexOf(holder), 1);
    }
    if (scope?.aborted) return waiting.reject(cancelledCall(this.service));
    this.observer.tooLate.inc();
    waiting.reject(this.unsent(`no answer within ${waiting.timeoutMs} ms: it was not sent, as no connection came free`, holder));
  }

  /**
   * No connection in time is `UPSTREAM_UNAVAILABLE`, as a connection not made in time is, whether
   * the caller's own calls held its share or every connection was busy; no `status` (nothing was
   * sent), no `writeOutcome`. The message says what the caller held.
   */
  private unsent(why: string, holder: Holder): GraphQLError {
    const { service, connections, share } = this;
    return notTheService(graphError(`${service} is unavailable: ${why} (this caller has ${holder.inFlight} call${holder.inFlight === 1 ? '' : 's'} in flight; one caller may hold ${share} of the ${connections} connections at once)`, { code: ErrorCode.UpstreamUnavailable, service }));
  }

  private tooLate(holder: Holder, timeoutMs: number): GraphQLError {
    this.observer.tooLate.inc();
    return this.unsent(`it was not sent, as less than half of its ${timeoutMs} ms deadline was left when a connection came free`, holder);
  }

  /** A cap on what one caller holds, as the pacing queue's: `RATE_LIMITED` at once, without a `retryAfterSeconds` (a place frees when one of its calls ends). */
  private tooManyWaiting(holder: Holder): GraphQLError {
    const { service, connections, share } = this;
    this.observer.queueFull.inc();
    const waiting = holder.waiting.length;
    return notTheService(
      graphError(
        `${service} was not called: this caller already has ${waiting} call${waiting === 1 ? '' : 's'} waiting for a connection, the most it may have (${holder.inFlight} in flight; one caller may hold ${share} of the ${connections} connections at once)`,
        { code: ErrorCode.RateLimited, service },
      ),
    );
  }

  /** Forgets callers that hold nothing and wait for nothing. */
  private sweep(): void {
    for (const [key, holder] of this.holders) {
      if (holder.inFlight === 0 && holder.waiting.length === 0) this.holders.delete(key);
    }
    this.sweepAt = Math.max(1024, this.holders.size * 2);
  }
}

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
/** The default of upstream connections per origin. */
export const DEFAULT_CONNECTIONS = 64;
/** The default cap on an upstream answer's body. */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** The default cap on a streamed download (a label PDF). */
export const DEFAULT_MAX_DOWNLOAD_BYTES = 100 * 1024 * 1024;
/**
 * The slowest pace a download is served at to its end: 64 KiB/s (512 kbit/s, a weak mobile link).
 * A streamed body gets the call's timeout plus the cap at this pace (about 27 minutes at 100 MiB),
 * since one stalled by its service is cut by the idle timeout long before; what this bounds is a
 * reader (or a trickling service) holding one of the caller's connections for ever.
 */
export const MIN_DOWNLOAD_BYTES_PER_SECOND = 64 * 1024;
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

/**
 * A stream that passes `body` through and fails with `tooLarge()` once more than `maxBytes` went by,
 * or with `brokeOff(error)` when `body` fails: the reader learns why, in the transport's words.
 */
function capped(body: Readable, maxBytes: number, tooLarge: () => Error, brokeOff: (error: Error) => Error): Readable {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > maxBytes ? tooLarge() : null, chunk);
    },
  });
  // Before the pipeline's own listener, which would pass the error on as it is.
  body.once('error', (error) => counter.destroy(brokeOff(error)));
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
  const { service, logger, timeoutMs = 10_000, retries = 2, backoffMs = 50, connections = DEFAULT_CONNECTIONS, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES, maxDownloadBytes = DEFAULT_MAX_DOWNLOAD_BYTES, observe, pace } = options;
  // Building a log line's fields costs even when the level drops it; reads are per call.
  const debugging = () => logger?.isLevelEnabled('debug') === true;
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  // Read once: a URL's origin is computed anew at every read.
  const baseOrigin = base.origin;
  const { connectionsPerCaller = Math.max(1, connections - Math.max(1, Math.floor(connections / 8))), maxWaitingPerCaller = 16 * connections, observeGate } = options;
  if (!Number.isInteger(connectionsPerCaller) || connectionsPerCaller < 1 || connectionsPerCaller > connections) {
    throw new RangeError(`connectionsPerCaller must be an integer from 1 to connections (${connections}); got ${connectionsPerCaller}`);
  }
  if (!Number.isInteger(maxWaitingPerCaller) || maxWaitingPerCaller < 0) throw new RangeError(`maxWaitingPerCaller must be an integer from 0; got ${maxWaitingPerCaller}`);
  const pools = new Map<string, Pool>();
  const gates = new Map<string, ConnectionGate>();

  function poolFor(origin: string): Pool {
    let pool = pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, { connections, keepAliveTimeout: 30_000, pipelining: 1 });
      pools.set(origin, pool);
    }
    return pool;
  }

  function gateFor(origin: string): ConnectionGate {
    let gate = gates.get(origin);
    if (!gate) {
      gate = new ConnectionGate(service, connections, connectionsPerCaller, maxWaitingPerCaller, observeGate ?? NOT_OBSERVED);
      gates.set(origin, gate);
    }
    return gate;
  }

  observeGate?.watchWaiting(() => {
    let count = 0;
    for (const gate of gates.values()) count += gate.waitingNow();
    return count;
  });

  // Callers are told apart as the pacing lanes tell them (the service's caller header), else by
  // the call's first credential.
  const rates = PUBLISHED_RATES[service];
  const callerKey = (call: RestCall): string => callerKeyOf((rates && callerOf(rates, call.headers)) || call.secrets?.[0], call.scope);

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
   * `perform` makes one attempt; `discard` lets go of an answer that is about to be retried; `trail`
   * learns whether a write reached the service without an answer; `bodyOf` names a streamed
   * answer's body, whose connection is held until it closes.
   */
  async function exchange<T extends { status: number }>(
    call: RestCall,
    deadline: Deadline,
    perform: (dispatcher: Dispatcher, options: Dispatcher.DispatchOptions) => Promise<T>,
    discard: (answer: T) => Promise<unknown>,
    trail: WriteTrail = { unanswered: false },
    bodyOf?: (answer: T) => Readable,
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
    // Reads are never marked: what they did upstream is nothing, whatever happened.
    const writing = call.method !== 'GET';
    const scope = call.scope;
    const callTimeoutMs = call.timeoutMs ?? timeoutMs;
    const caller = callerKey(call);
    // What was left of the deadline when the call was first sent: the time the service had.
    let sentWithMs = 0;
    for (let attempt = 1; ; attempt += 1) {
      // Retries wait for their turn too; a call whose turn comes too late is refused unsent.
      const paced = pace ? await pace(call, deadline.at) : undefined;
      // Then a connection of the caller's share: at once, or after its turn in the caller's queue.
      const gate = gateFor(origin);
      const holder = gate.holderOf(caller);
      if (!gate.take(holder)) {
        try {
          await gate.wait(holder, deadline, callTimeoutMs, scope);
        } catch (refused) {
          paced?.(); // not sent: the slot goes back
          throw refused;
        }
      }
      const remaining = deadline.at - Date.now();
      if (remaining <= 0 || !budgetLeft(scope) || scope?.aborted) {
        // Not sent after all: the slot and the connection go back.
        paced?.();
        gate.release(holder);
      }
      if (remaining <= 0) throw notTheService(unavailable(call, `no answer within ${callTimeoutMs} ms: it was not sent, as its turn came too late`));
      // Every attempt is a call upstream: it counts against the request's budget, and is not made once the request is cancelled.
      scope?.take(service);
      if (attempt === 1) sentWithMs = remaining;
      const started = performance.now();
      const sending = writing ? { sent: false } : undefined;
      const pool = poolFor(origin);
      let holding = true;
      try {
        const dispatcher = sending ? pool.compose((dispatch) => (options, handler) => dispatch(options, new SendingMark(handler, sending))) : pool;
        const answer = await perform(dispatcher, { method: call.method, path: fullPath, headers, body: payload, headersTimeout: remaining, bodyTimeout: remaining });
        // The connection is free once the answer is read; a streamed one's once its body closes.
        holding = false;
        if (bodyOf) bodyOf(answer).once('close', () => gate.release(holder));
        else gate.release(holder);
        if (writing && UNANSWERED_STATUS.has(answer.status)) trail.unanswered = true;
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
        if (holding) gate.release(holder);
        paced?.();
        const durationMs = performance.now() - started;
        observe?.({ service, operation: call.operation, method: call.method, status: 'error', durationMs, attempt });
        if (caught instanceof AnswerTooLarge) {
          const error = tooLarge(caught.maxBytes, caught.status);
          throw writing && caught.status >= 200 && caught.status < 300 ? withWriteOutcome(error, service, WriteOutcome.Applied) : error;
        }
        if (sending?.sent) trail.unanswered = true;
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
        if (timedOut) {
          // Sent with less than half its deadline (it waited its turn for the rest): too little for its silence to say anything of the service.
          if (sentWithMs < callTimeoutMs / 2) throw notTheService(unavailable(call, `no answer within ${callTimeoutMs} ms (it was sent ${callTimeoutMs - sentWithMs} ms late, after waiting its turn)`));
          throw unavailable(call, `no answer within ${callTimeoutMs} ms`);
        }
        if (canRetry && code && CONNECTION_ERRORS.has(code) && attempt <= retries && budgetLeft(scope)) {
          const wait = backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random());
          if (deadline.at - Date.now() > wait) {
            await sleep(wait, scope);
            continue;
          }
        }
        const failure = code ?? (error as Error)?.name ?? 'unknown';
        throw unavailable(call, brokeOff ? `the answer broke off (${code ?? 'read error'})` : sending?.sent ? `the connection broke after the request was sent (${failure})` : `connection failed (${failure})`);
      }
    }
  }

  const deadlines = createDeadlines();
  /** What a streamed body may take beyond the call's timeout once its headers came: the cap at the slowest pace a client is served at. */
  const downloadAllowanceMs = Math.ceil((maxDownloadBytes / MIN_DOWNLOAD_BYTES_PER_SECOND) * 1000);
  const deadlineOf = (call: RestCall) => deadlines(call.timeoutMs ?? timeoutMs);

  async function complete(call: RestCall, lookup: boolean): Promise<RestResponse | null> {
    const deadline = deadlineOf(call);
    const trail: WriteTrail = { unanswered: false };
    let answer: BufferedAnswer;
    try {
      answer = await exchange(call, deadline, (dispatcher, options) => exchangeBuffered(dispatcher, options, watchWith(deadline.watch, call.scope), maxResponseBytes), NOTHING_TO_DISCARD, trail);
    } catch (error) {
      if (!trail.unanswered) throw error;
      const told = withWriteOutcome(error, service, WriteOutcome.Unknown);
      // A write sent too late for its timeout to count against the service is still one that may have been applied.
      throw saysNothingOfService(error) && told !== error ? notTheService(told as GraphQLError) : told;
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
        const error = graphError(`${service}: the answer was not valid JSON`, { code: ErrorCode.UpstreamError, service, status });
        throw call.method === 'GET' ? error : withWriteOutcome(error, service, WriteOutcome.Applied);
      }
      return { status, headers, body, text };
    }
    // An earlier attempt went through and its answer was lost: this 404 is that attempt's work,
    // and what the caller asked for (the resource gone) holds.
    if (status === 404 && call.method === 'DELETE' && trail.unanswered) return deleted();
    if (call.answers?.includes(status)) return { status, headers, body, text };
    const error = errorForUpstream({ service, status, body: call.errorBody ? call.errorBody(body ?? text) : body ?? text, retryAfter: headers['retry-after'], lookup, cursor: call.followsCursor, secrets: call.secrets ?? [] });
    if (!error) return null;
    const scrubbed = scrubError(error, call.secrets ?? []);
    // A refusal of the request itself (4xx) says the earlier attempts did not act either; a 5xx, 408 or 429 says nothing of them.
    throw trail.unanswered && (status >= 500 || status === 429 || status === 408) ? withWriteOutcome(scrubbed, service, WriteOutcome.Unknown) : scrubbed;
  }

  /**
   * One attempt whose body is handed over as a stream. The deadline cancels it until the answer's
   * headers arrive (an error answer's body too); from then on a 2xx body has bounds of its own
   * (`stream`), and only the request's cancellation still stops it, until the stream closes.
   * `idleMs` is undici's `bodyTimeout`: its timer is refreshed at every chunk and does not fire
   * while the parser is paused because the body's reader has not taken what came
   * (`node_modules/undici/lib/dispatcher/client-h1.js`, `onParserTimeout`), so it measures the
   * service's silence, never the reader's pace.
   */
  function performStreamed(deadline: Deadline, scope: CallScope | undefined, idleMs: number) {
    return async (dispatcher: Dispatcher, options: Dispatcher.DispatchOptions) => {
      const controller = new AbortController();
      const abort = (reason: Error) => controller.abort(reason);
      const unwatchDeadline = deadline.watch(abort);
      const unwatchScope = scope ? scope.watch(abort) : NOT_WATCHING;
      try {
        const response = await dispatcher.request({ ...options, bodyTimeout: idleMs, signal: controller.signal });
        // An error answer, read up to a cap to be reported or let go, stays under the deadline.
        if (response.statusCode >= 200 && response.statusCode < 300) unwatchDeadline();
        else response.body.once('close', unwatchDeadline);
        response.body.once('close', unwatchScope);
        return { status: response.statusCode, response };
      } catch (error) {
        unwatchDeadline();
        unwatchScope();
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
      // The service's silence allowed mid-body is the silence allowed before its answer.
      const idleMs = call.timeoutMs ?? timeoutMs;
      let response: Dispatcher.ResponseData;
      try {
        ({ response } = await exchange(call, deadline, performStreamed(deadline, call.scope, idleMs), (answer) => answer.response.body.dump(), undefined, (answer) => answer.response.body));
      } catch (error) {
        deadline.release();
        throw error;
      }
      const headers = flattenHeaders(response.headers);
      const { body, statusCode: status } = response;
      if (status >= 200 && status < 300) {
        // The deadline covers the call until its headers: a body read at a slow client's pace was
        // cut off by it (a 19 MB file read at 200 KB/s arrived 13.7 MB long).
        deadline.release();
        if (Number(headers['content-length']) > maxDownloadBytes) {
          body.destroy();
          throw tooLarge(maxDownloadBytes, status);
        }
        // The idle timeout does not see a reader slower than the cap at MIN_DOWNLOAD_BYTES_PER_SECOND,
        // nor a service trickling a byte at a time: either would hold the connection for ever.
        const totalMs = idleMs + downloadAllowanceMs;
        const timer = setTimeout(() => body.destroy(unavailable(call, `the download took longer than ${totalMs} ms`)), totalMs);
        timer.unref();
        body.once('close', () => clearTimeout(timer));
        const brokeOff = (error: Error) =>
          error instanceof GraphQLError ? error : unavailable(call, error instanceof undiciErrors.BodyTimeoutError ? `the download stalled: no byte for ${idleMs} ms` : `the download broke off (${errorCode(error) ?? error.name})`);
        return { status, headers, body: capped(body, maxDownloadBytes, () => tooLarge(maxDownloadBytes, status), brokeOff) };
      }
      // An error answer is read only up to the cap, then let go.
      const text = await readCapped(body, maxResponseBytes).catch(() => '');
      deadline.release();
      const error = errorForUpstream({ service, status, body: parseJson(text) ?? text, retryAfter: headers['retry-after'], secrets: call.secrets ?? [] })!;
      throw scrubError(error, call.secrets ?? []);
    },
    async close() {
      await Promise.all([...pools.values()].map((pool) => pool.close()));
      pools.clear();
    },
  };
}
