import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { ErrorCode, graphError } from '../lib/errors.ts';
import { GATEWAY_ORIGIN_HEADER } from '../lib/downloads.ts';
import { CALL_BUDGET_HEADER, CALLS_MADE_HEADER } from '../lib/callBudget.ts';
import { credentialHeadersFor } from './credentials.ts';
import type { Cancellation, SubgraphAnswer, UndiciFetcher } from './fetcher.ts';
import type { GatewayContext } from './context.ts';
import { createInFlight, readKey } from './inFlight.ts';
import { credentialDigest, type MicroCache } from './microCache.ts';
import { createWriteFence, type FencedRead } from './writeFence.ts';
import type { BreakerGuard } from '../lib/circuitBreakerGuards.ts';
import { admitSubgraphCall } from './subgraphBreaker.ts';
import { failedRootFetch } from './failedFetch.ts';
import { tracerFor, withTraceContext } from '../lib/tracing.ts';
import { GATEWAY_SERVICE } from './tracing.ts';
import { AnswerTooLarge } from '../lib/bufferedExchange.ts';
import { BrokenBatch } from '../lib/readBatch.ts';
import type { ReadBatcher } from './readBatches.ts';

/** What the query planner sends for reads: queries and entity fetches, never a mutation. */
const READ = /^\s*(?:query\b|\{)/;

type GatewayGraphQLResponse = Awaited<ReturnType<GraphQLDataSource['process']>>;
type CachePolicy = { restrict(hint: { maxAge?: number; scope?: 'PUBLIC' | 'PRIVATE' }): void };
/** What a subgraph is sent: the operation, its variables and name, as JSON. */
export type SubgraphRequest = Omit<GraphQLDataSourceProcessOptions['request'], 'http'>;

/** `cache-control` of a subgraph's answer as Apollo's cache hint, read as RemoteGraphQLDataSource reads it. */
function cacheHintOf(header: string | string[] | undefined): { maxAge: number; scope?: 'PUBLIC' | 'PRIVATE' } {
  const hint: { maxAge: number; scope?: 'PUBLIC' | 'PRIVATE' } = { maxAge: 0 };
  for (const part of String(header ?? '').split(',')) {
    const [rawName, rawValue] = part.split('=', 2);
    const name = rawName?.trim();
    const value = rawValue?.trim().replace(/^"|"$/g, '');
    if (name === 'max-age' && value && /^[0-9]+$/.test(value)) hint.maxAge = Number(value);
    if (name === 'private') hint.scope = 'PRIVATE';
    if (name === 'public') hint.scope = 'PUBLIC';
  }
  return hint;
}

/** The calls a subgraph says it made; undefined when it did not say (all that was reserved is then spent). */
function callsMade(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && /^[0-9]{1,15}$/.test(value) ? Number(value) : undefined;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One subgraph as the gateway reaches it: the caller's credential for this subgraph's service and
 * nothing else; a subgraph that cannot be reached is a typed UPSTREAM_UNAVAILABLE, not a masked bug.
 *
 * Apollo's RemoteGraphQLDataSource builds a node-fetch Request and Headers for every call, next
 * to what the fetcher builds: the gateway's main cost of its own on the benchmark. This one sends
 * the serialised request straight through undici.
 */
export class SubgraphDataSource implements GraphQLDataSource<GatewayContext> {
  /** Reads running, by credential, that a mutation of the same credential must keep from being reused. */
  private readonly fence = createWriteFence();
  /** Identical reads with identical credentials in flight at once: one subgraph request for all of them. */
  private readonly inFlight = createInFlight<SubgraphAnswer>(this.fence);
  /** Requests that joined an identical one instead of being sent. */
  shared = 0;
  /** The fetch's span continues in the subgraph (`traceparent`), when traces are on. */
  private readonly traced = tracerFor(GATEWAY_SERVICE) !== undefined;

  constructor(
    readonly name: string,
    readonly url: string,
    private readonly fetcher: UndiciFetcher,
    private readonly dedupe = true,
    /** This subgraph's circuit breaker; none when breakers are off. */
    private readonly breaker?: BreakerGuard,
    /** Reads of the root fields an operator opted in, kept a short while; undefined is off. */
    private readonly microCache?: MicroCache,
    /** Reads of one credential ready at once, sent as one request; undefined is off. */
    private readonly batcher?: ReadBatcher,
  ) {
    // A write through another gateway: this one's reads of that credential on their way may
    // answer from before it, so they are joined and kept no more, as after a write here.
    microCache?.watch(name, (digests) => this.fence.overtakeEvery(digests && ((credential) => digests.has(credentialDigest(credential)))));
  }

  async process(options: GraphQLDataSourceProcessOptions<GatewayContext>): Promise<GatewayGraphQLResponse> {
    const { http, ...request } = options.request;
    let answer: SubgraphAnswer;
    try {
      answer = await this.send(request, options.context, http?.headers);
    } catch (error) {
      const incoming = 'pathInIncomingRequest' in options ? options : undefined;
      return failedRootFetch(error, { query: request.query ?? '', operationName: request.operationName, document: incoming?.document, path: incoming?.pathInIncomingRequest });
    }
    return this.read(answer, 'incomingRequestContext' in options ? options.incomingRequestContext.overallCachePolicy : undefined);
  }

  /**
   * Posts an operation to the subgraph with the caller's credential for this service; rejects with
   * UPSTREAM_UNAVAILABLE when the subgraph cannot be reached.
   */
  async send(request: SubgraphRequest, context: Partial<GatewayContext> | undefined, extraHeaders?: Iterable<[string, string]>): Promise<SubgraphAnswer> {
    if (!request.query) throw new Error(`no query to send to the ${this.name} subgraph`);
    const headers: Record<string, string> = {};
    // Headers Apollo itself asks for, such as federated tracing's.
    if (extraHeaders) for (const [name, value] of extraHeaders) headers[name] = value;
    headers['content-type'] = 'application/json';
    // Operations the gateway runs on its own (health checks) have no caller.
    const credentialHeaders = context?.headers ? credentialHeadersFor(this.name, context.headers) : undefined;
    if (credentialHeaders) Object.assign(headers, credentialHeaders);
    if (context?.origin) headers[GATEWAY_ORIGIN_HEADER] = context.origin;
    const body = JSON.stringify(request);
    // An HTTP request is cut off through its departure, which needs no AbortSignal.
    const departure = context?.departure ?? context?.signal;
    // The headers the in-flight and micro-cache keys hold the caller's credential by, alone.
    const credential = credentialHeaders ? JSON.stringify(credentialHeaders) : '';
    if (!READ.test(request.query)) return this.sendMutation(credential, headers, body, context, departure);
    const ttlMs = this.microCache?.ttlOf(request.query);
    const cacheKey = ttlMs === undefined ? undefined : this.microCache!.keyOf(this.name, credential, body, headers);
    // Writes through other gateways, answered before this read was sent, are heard of first.
    if (cacheKey !== undefined) await this.microCache!.caughtUp();
    // A kept answer, like a joined one, made no upstream call of its own: the budget is not touched.
    const kept = cacheKey === undefined ? undefined : this.microCache!.get(cacheKey);
    if (kept) return kept;
    if (!this.dedupe) {
      if (cacheKey === undefined) return this.post(headers, body, context, departure, true);
      const read = this.fence.begin(credential);
      const answer = this.sendRead(headers, body, context, departure, cacheKey, ttlMs, read);
      const end = () => read.end();
      answer.then(end, end);
      return answer;
    }
    const { promise, shared } = this.inFlight.run(readKey(body, headers), departure, (call, read) => this.sendRead(headers, body, context, call, cacheKey, ttlMs, read), credential);
    if (shared) this.shared += 1;
    return promise;
  }

  /**
   * Sends a mutation. The caller's reads of this subgraph that began before it, or while it ran,
   * may answer from before the write: from its sending and again once answered, no later read of
   * that credential joins them or is answered by what the micro-cache kept, nor is their answer kept.
   * Other gateways on the micro-cache's channel are told before the answer is returned, so a read
   * sent after it through any of them does not get what they kept from before the write.
   */
  private async sendMutation(credential: string, headers: Record<string, string>, body: string, context: Partial<GatewayContext> | undefined, departure: Cancellation | undefined): Promise<SubgraphAnswer> {
    this.overtakeReads(credential);
    try {
      return await this.post(headers, body, context, departure);
    } finally {
      this.overtakeReads(credential);
      await this.microCache?.announce(this.name, credential);
    }
  }

  private overtakeReads(credential: string) {
    this.fence.overtake(credential);
    this.microCache?.drop(this.name, credential);
  }

  /** Sends a read, and keeps its answer when the micro-cache is asked to and no mutation overtook it. */
  private sendRead(headers: Record<string, string>, body: string, context: Partial<GatewayContext> | undefined, signal: Cancellation | undefined, cacheKey: string | undefined, ttlMs: number | undefined, read: FencedRead): Promise<SubgraphAnswer> {
    const answer = this.post(headers, body, context, signal, true);
    if (cacheKey === undefined) return answer;
    return answer.then((whole) => {
      if (!read.overtaken) this.microCache!.set(cacheKey, whole, ttlMs!);
      return whole;
    });
  }

  private async post(headers: Record<string, string>, body: string, context: Partial<GatewayContext> | undefined, signal: Cancellation | undefined, read = false): Promise<SubgraphAnswer> {
    // An open breaker fails fast here, before any budget is reserved or anything is sent.
    const outcome = admitSubgraphCall(this.breaker);
    // The operation's upstream calls are counted across its subgraph requests (gateway/demandControl.ts).
    const ledger = context?.calls;
    const reserved = ledger?.reserve(this.name);
    // A batch carries one trace context for all its reads: traced reads go alone, each continuing its own trace.
    const batched = read && !this.traced && this.batcher !== undefined;
    let sent = reserved === undefined || batched ? headers : { ...headers, [CALL_BUDGET_HEADER]: String(reserved) };
    // Added after the dedupe key was made: identical reads of two traces still share one request.
    if (this.traced) sent = withTraceContext({ ...sent });
    let answer: SubgraphAnswer | undefined;
    try {
      answer = await (batched ? this.batcher!.post(sent, body, reserved, signal) : this.fetcher.post(this.url, sent, body, signal));
      outcome.answered(answer.status);
      return answer;
    } catch (error) {
      if (error instanceof AnswerTooLarge) {
        outcome.answered(error.status);
        throw graphError(`the ${this.name} subgraph answered more than ${error.maxBytes} bytes`, { code: ErrorCode.UpstreamError, service: this.name });
      }
      if (error instanceof BrokenBatch) {
        outcome.answered(502);
        throw graphError(`the ${this.name} subgraph broke a batch of reads: ${error.message}`, { code: ErrorCode.UpstreamError, service: this.name });
      }
      outcome.unreachable(signal);
      throw graphError(`the ${this.name} subgraph is unreachable`, { code: ErrorCode.UpstreamUnavailable, service: this.name });
    } finally {
      if (reserved !== undefined) ledger!.settle(this.name, reserved, callsMade(answer?.headers[CALLS_MADE_HEADER]));
    }
  }

  /** A subgraph's answer as a GraphQL response, its cache hint applied to the request's policy. */
  read(answer: SubgraphAnswer, cachePolicy?: unknown): GatewayGraphQLResponse {
    const body = parseObject(answer.bytes.toString('utf8'));
    if (answer.status >= 200 && answer.status < 300) {
      if (!body) throw graphError(`the ${this.name} subgraph answered something that is not a GraphQL response`, { code: ErrorCode.UpstreamError, service: this.name, status: answer.status });
      const policy = cachePolicy as Partial<CachePolicy> | undefined;
      if (typeof policy?.restrict === 'function') policy.restrict(cacheHintOf(answer.headers['cache-control']));
      return body as GatewayGraphQLResponse;
    }
    // A subgraph refuses bad variables with HTTP 400 and typed GraphQL errors: keep them and their codes.
    if (Array.isArray(body?.errors)) return { errors: body.errors as GatewayGraphQLResponse['errors'] };
    const code = answer.status === 401 ? ErrorCode.Unauthenticated : answer.status === 403 ? ErrorCode.Forbidden : ErrorCode.UpstreamError;
    throw graphError(`the ${this.name} subgraph answered HTTP ${answer.status}`, { code, service: this.name, status: answer.status });
  }
}
