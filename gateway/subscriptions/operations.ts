import { getOperationAST, print, type DocumentNode, type ExecutionResult, type FormattedExecutionResult } from 'graphql';
import type { ApolloServer, BaseContext } from '@apollo/server';
import type { SubscriptionExecutor } from './executor.ts';
import { createAuthWatch } from './authWatch.ts';
import { AuthFailure, type Authenticated, type Authenticator } from '../auth/authenticate.ts';
import type { FieldAccess } from '../auth/access.ts';
import { rateLimitedError, type RateLimiter } from '../rateLimit.ts';
import { applyRemovals, type Restricted } from '../auth/fieldAccess.ts';
import type { Principal } from '../auth/principal.ts';
import { createOperationSpans, type StreamingTransport } from '../tracing.ts';
import { isCredentialHeader } from '../credentials.ts';
import { trimmedAsHeader } from '../../lib/http.ts';

export type { Headers } from '../context.ts';
import type { Headers } from '../context.ts';

export interface OperationArgs {
  document: DocumentNode;
  /** The text the client sent, when the transport has it: a query's error locations point into it. */
  query?: string | undefined;
  operationName?: string | null | undefined;
  variableValues?: Record<string, unknown> | null | undefined;
  headers: Headers;
  /** The transport's peer, for trusting an API gateway's consumer headers. */
  remoteAddress?: string | undefined;
  /** The client's address behind any trusted proxy, for the limits per address (`lib/trustedProxies.ts`). */
  clientAddress?: string | undefined;
  /** Set when the transport authenticated the request already (SSE, over HTTP). */
  authenticated?: Authenticated | undefined;
  /** Aborted when the client's connection closes: the query's subgraph requests, and the upstream calls queued behind them, stop. */
  signal?: AbortSignal | undefined;
  /** What carries it, for its span. */
  transport?: StreamingTransport | undefined;
}

/** The graph's own OAuth 2.0, when it is on. */
export interface RunnerAccess {
  authenticator: Authenticator;
  access?: FieldAccess | undefined;
  limiter?: RateLimiter | undefined;
}

/**
 * The transports type results as graphql-js results with GraphQLError instances; ours carry errors
 * already formatted (codes set, unexpected ones masked), which serialise identically.
 */
type WireResult = ExecutionResult | AsyncIterableIterator<ExecutionResult>;
const onTheWire = (result: FormattedExecutionResult | AsyncIterableIterator<FormattedExecutionResult>) => result as WireResult;

/**
 * What both streaming transports run: subscriptions through the executor, queries and mutations
 * through Apollo Server exactly as over HTTP, so the transports stay thin.
 */
export function createOperationRunner<Context extends BaseContext & { headers: Headers; principal?: Principal | undefined; signal?: AbortSignal | undefined }>(executor: SubscriptionExecutor, apollo: ApolloServer<Context>, auth?: RunnerAccess) {
  // A subscription is authenticated when it starts, and must not outlive its token nor the credentials held for it.
  const watch = auth?.authenticator.enabled ? createAuthWatch(auth.authenticator) : undefined;
  /** Who calls, or a refusal to send instead of results. */
  async function callerOf(args: OperationArgs): Promise<Authenticated | { errors: { message: string; extensions: { code: string } }[] }> {
    if (!auth) return { headers: args.headers };
    // Over SSE the HTTP layer has authenticated and counted the request already.
    if (args.authenticated) return args.authenticated;
    let caller: Authenticated;
    try {
      caller = await auth.authenticator.authenticate(args.headers, args.remoteAddress);
    } catch (error) {
      if (!(error instanceof AuthFailure)) throw error;
      return { errors: [{ message: error.message, extensions: { code: error.status === 401 ? 'UNAUTHENTICATED' : 'UPSTREAM_UNAVAILABLE' } }] };
    }
    const decision = (await auth.limiter?.check(caller.headers, caller.principal, args.clientAddress)) ?? { allowed: true };
    return decision.allowed ? caller : { errors: [rateLimitedError(decision)] };
  }

  /** Each event with the removed fields put back as nulls, with their errors. */
  async function* restored(events: AsyncIterableIterator<FormattedExecutionResult>, restricted: Restricted, variables: OperationArgs['variableValues']): AsyncGenerator<FormattedExecutionResult> {
    for await (const event of events) {
      const applied = applyRemovals(event.data as Record<string, unknown> | null | undefined, restricted.removals, variables);
      const errors = [...(event.errors ?? []), ...applied.errors.map((error) => error.toJSON())];
      yield { ...event, data: applied.data, ...(errors.length ? { errors } : {}) };
    }
  }

  async function subscribe(args: OperationArgs): Promise<WireResult> {
    const caller = await callerOf(args);
    if ('errors' in caller) return onTheWire(caller);
    const restricted = auth?.access?.restrict(args.document, args.operationName, caller.principal, print(args.document));
    if (restricted?.empty) {
      const applied = applyRemovals({}, restricted.removals, args.variableValues);
      return onTheWire({ data: applied.data, errors: applied.errors.map((error) => error.toJSON()) });
    }
    const result = await executor.subscribe({ document: restricted?.document ?? args.document, operationName: args.operationName ?? null, variables: args.variableValues ?? null, headers: caller.headers });
    if (!(Symbol.asyncIterator in result)) return onTheWire(result);
    if (watch && caller.principal) watch.add({ ...caller, principal: caller.principal }, args.headers, args.remoteAddress, result);
    if (!restricted) return onTheWire(result);
    return onTheWire(restored(result, restricted, args.variableValues) as AsyncIterableIterator<FormattedExecutionResult>);
  }

  async function execute(args: OperationArgs): Promise<WireResult> {
    const { document, operationName, variableValues } = args;
    const operation = getOperationAST(document, operationName ?? undefined);
    if (operation?.operation === 'subscription') return subscribe(args);
    const caller = await callerOf(args);
    if ('errors' in caller) return onTheWire(caller);
    const response = await apollo.executeOperation(
      { query: args.query ?? print(document), ...(operationName ? { operationName } : {}), ...(variableValues ? { variables: variableValues } : {}) },
      { contextValue: { headers: caller.headers, principal: caller.principal, signal: args.signal } as Context },
    );
    return onTheWire(response.body.kind === 'single' ? response.body.singleResult : { errors: [{ message: 'incremental delivery is not supported on this transport', extensions: { code: 'BAD_REQUEST' } }] });
  }

  // Each operation in a span of its own when traces are on.
  const spans = createOperationSpans();
  if (!spans) return { subscribe, execute };
  return {
    subscribe: (args: OperationArgs) => spans(args, () => subscribe(args)),
    execute: (args: OperationArgs) => spans(args, () => execute(args)),
  };
}

export type OperationRunner = ReturnType<typeof createOperationRunner>;

/** What Node refuses in a header value (its `checkInvalidHeaderChar`): anything but tab, visible ASCII and Latin-1. */
const NOT_A_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Node's limit on a request's headers (16 KiB, `--max-http-header-size`): no credential longer
 * reaches the gateway over HTTP, nor could the subgraph send it on. Over graphql-ws a message may
 * be 1 MiB, and a credential of 900 KB cost every process that handled it.
 */
const MAX_HEADER_CHARS = 16 * 1024;

/** Whether the gateway reads this header as a caller's credential: some service's, or the graph's own bearer token. */
const isCredential = (name: string) => name === 'authorization' || isCredentialHeader(name);

/**
 * graphql-ws `connectionParams` as the headers an HTTP request would carry: names in lower case,
 * values trimmed as Node trims a header's. A credential no HTTP request could carry (not a string,
 * or holding a character a header may not) refuses the connection, as Node refuses such a request.
 * Without this, `TOKEN`, `TOKEN ` and ` TOKEN` were three credentials to the caps and the rate
 * limits, and one to the service, which trims them.
 */
export function connectionHeaders(params: unknown): { headers: Headers } | { refusal: string } {
  const headers: Headers = {};
  for (const [key, value] of Object.entries(params && typeof params === 'object' ? params : {})) {
    const name = key.toLowerCase();
    if (isCredential(name)) {
      if (typeof value !== 'string' || value.length > MAX_HEADER_CHARS || NOT_A_HEADER_VALUE.test(value)) return { refusal: `connectionParams "${name}" must be a string a header can carry` };
      headers[name] = trimmedAsHeader(value);
    } else if (typeof value === 'string') {
      headers[name] = trimmedAsHeader(value);
    } else if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
      headers[name] = value.map(trimmedAsHeader);
    }
  }
  return { headers };
}
