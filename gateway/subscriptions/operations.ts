import { getOperationAST, print, type DocumentNode, type ExecutionResult, type FormattedExecutionResult } from 'graphql';
import type { ApolloServer, BaseContext } from '@apollo/server';
import type { SubscriptionExecutor } from './executor.ts';
import { AuthFailure, type Authenticated, type Authenticator } from '../auth/authenticate.ts';
import type { FieldAccess } from '../auth/access.ts';
import { rateLimitedError, type RateLimiter } from '../rateLimit.ts';
import { applyRemovals, type Restricted } from '../auth/fieldAccess.ts';
import type { Principal } from '../auth/principal.ts';
import { createOperationSpans, type StreamingTransport } from '../tracing.ts';

export type { Headers } from '../context.ts';
import type { Headers } from '../context.ts';

export interface OperationArgs {
  document: DocumentNode;
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
  async function* restored(events: AsyncIterableIterator<FormattedExecutionResult>, restricted: Restricted): AsyncGenerator<FormattedExecutionResult> {
    for await (const event of events) {
      const applied = applyRemovals(event.data as Record<string, unknown> | null | undefined, restricted.removals);
      yield { ...event, data: applied.data, errors: [...(event.errors ?? []), ...applied.errors.map((error) => error.toJSON())] };
    }
  }

  async function subscribe(args: OperationArgs): Promise<WireResult> {
    const caller = await callerOf(args);
    if ('errors' in caller) return onTheWire(caller);
    const restricted = auth?.access?.restrict(args.document, args.operationName, caller.principal, print(args.document));
    if (restricted?.empty) {
      const applied = applyRemovals({}, restricted.removals);
      return onTheWire({ data: applied.data, errors: applied.errors.map((error) => error.toJSON()) });
    }
    const result = await executor.subscribe({ document: restricted?.document ?? args.document, operationName: args.operationName ?? null, variables: args.variableValues ?? null, headers: caller.headers });
    if (!restricted || !(Symbol.asyncIterator in result)) return onTheWire(result);
    return onTheWire(restored(result, restricted) as AsyncIterableIterator<FormattedExecutionResult>);
  }

  async function execute(args: OperationArgs): Promise<WireResult> {
    const { document, operationName, variableValues } = args;
    const operation = getOperationAST(document, operationName ?? undefined);
    if (operation?.operation === 'subscription') return subscribe(args);
    const caller = await callerOf(args);
    if ('errors' in caller) return onTheWire(caller);
    const response = await apollo.executeOperation(
      { query: print(document), ...(operationName ? { operationName } : {}), ...(variableValues ? { variables: variableValues } : {}) },
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

/** connectionParams or headers, with names in lower case as HTTP headers are. */
export function lowerCaseKeys(params: unknown): Headers {
  const out: Headers = {};
  for (const [name, value] of Object.entries(params && typeof params === 'object' ? params : {})) {
    if (typeof value === 'string' || Array.isArray(value)) out[name.toLowerCase()] = value as string | string[];
  }
  return out;
}
