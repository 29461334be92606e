import type http from 'node:http';
import { getOperationAST, GraphQLError, specifiedRules, validate, type GraphQLSchema, type GraphQLFormattedError } from 'graphql';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from '../../../lib/logger.ts';
import { formatGraphError } from '../../../lib/errorFormatting.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../../../lib/http.ts';
import { operationLimitsRule, parseWithin, SUBGRAPH_OPERATION_LIMITS, type OperationLimitsRule } from '../../../lib/operationShapeLimits.ts';
import { EVENT_TRACE_EXTENSION } from '../../../lib/tracing.ts';
import { eventTraceOf } from './eventTraces.ts';

export interface SubscriptionServerOptions<Context extends object> {
  server: http.Server;
  schema: GraphQLSchema;
  /** Builds the context of one subscription from the connection's `connectionParams` (header names in lower case). */
  context(params: Record<string, unknown>): Context;
  logger: Logger;
  /** The service the subgraph wraps, named in errors about its values. */
  service: string;
  /** @default '/graphql' */
  path?: string;
  /** The largest message accepted (as the HTTP body limit); a larger one closes the socket with 1009. @default 1 MiB */
  maxPayloadBytes?: number;
  /** The shape bound `/graphql` validates with over HTTP, and parses within (subgraphs/kit/server.ts). @default SUBGRAPH_OPERATION_LIMITS's */
  limits?: OperationLimitsRule;
}

/**
 * Why a subscribe message is refused before graphql-ws runs it, if it is: a text past the token
 * bound, which graphql-ws would parse and validate whole (20,000 operations: 330 ms), or anything
 * but a subscription. Queries and mutations go over HTTP, where each request gets its budget of
 * upstream calls (`MAX_REQUEST_UPSTREAM_CALLS`); on this socket nothing would bound them. Other
 * texts that do not parse are graphql-ws's to refuse, as before.
 */
function refusalOf(query: unknown, operationName: unknown, maxTokens: number): GraphQLError[] | undefined {
  if (typeof query !== 'string') return undefined;
  let operation;
  try {
    operation = getOperationAST(parseWithin(query, { maxTokens }), typeof operationName === 'string' ? operationName : undefined);
  } catch (error) {
    return error instanceof GraphQLError && TOO_MANY_TOKENS.test(error.message) ? [new GraphQLError(error.message, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } })] : undefined;
  }
  return operation && operation.operation !== 'subscription' ? ONLY_SUBSCRIPTIONS : undefined;
}

/** How graphql-js words a document stopped at `maxTokens` (16 writes "more that"). */
const TOO_MANY_TOKENS = /^Syntax Error: Document contains more tha[nt] \d+ tokens\./;

/** What writing to a socket whose peer has gone away fails with. */
const PEER_GONE = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

/**
 * Whether graphql-ws reports only that an event could not be written because the gateway hung up
 * (a restart, a cut connection): the gateway resubscribes from its cursor, so nothing is lost and
 * there is no bug to log as one.
 */
export function onlyPeerGone(errors: readonly { originalError?: unknown }[]): boolean {
  return errors.length > 0 && errors.every(({ originalError }) => PEER_GONE.has(String((originalError as { code?: unknown } | undefined)?.code)));
}

const ONLY_SUBSCRIPTIONS = [new GraphQLError('this socket carries subscriptions only: send queries and mutations over HTTP', { extensions: { code: 'BAD_REQUEST' } })];

const lowerCaseKeys = (params: unknown): Record<string, unknown> =>
  Object.fromEntries(Object.entries(params && typeof params === 'object' ? params : {}).map(([name, value]) => [name.toLowerCase(), value]));

/** How a stopping subgraph closes its subscribers' sockets. */
export const SUBGRAPH_RESTART = { code: 1012, reason: 'the subgraph is restarting: resubscribe from your last cursor' } as const;

/**
 * graphql-ws on the subgraph's own `/graphql`: the gateway opens subscriptions here, and only
 * subscriptions are taken. Credentials arrive in `connectionParams` under the same names as the
 * HTTP headers.
 */
export function attachSubscriptionServer<Context extends object>({ server, schema, context, logger, service, path = '/graphql', maxPayloadBytes = DEFAULT_MAX_BODY_BYTES, limits = operationLimitsRule(SUBGRAPH_OPERATION_LIMITS) }: SubscriptionServerOptions<Context>): () => Promise<void> {
  const wss = new WebSocketServer({ server, path, maxPayload: maxPayloadBytes });
  // graphql-ws alone validates with graphql-js's rules only.
  const rules = [...specifiedRules, limits];
  const format = formatGraphError(logger, { service });
  const formatAll = (errors: readonly { toJSON(): GraphQLFormattedError }[]) => errors.map((error) => format(error.toJSON(), error));
  const disposable = useServer(
    {
      schema,
      context: (ctx) => context(lowerCaseKeys(ctx.connectionParams)),
      onSubscribe: (_ctx, _id, payload) => refusalOf(payload.query, payload.operationName, limits.limits.maxTokens),
      validate: (validated, document) => validate(validated, document, rules),
      onNext: (_ctx, _id, _payload, args, result) => {
        const trace = eventTraceOf(args.contextValue);
        if (!result.errors && !trace) return undefined;
        // The event's ingestion, for the gateway to link its execution to; never passed on to clients.
        return { ...result, ...(result.errors ? { errors: formatAll(result.errors) } : {}), ...(trace ? { extensions: { ...result.extensions, [EVENT_TRACE_EXTENSION]: trace } } : {}) };
      },
      onError: (_ctx, _id, _payload, errors) => {
        if (!onlyPeerGone(errors)) return formatAll(errors);
        logger.debug({ code: (errors[0]!.originalError as NodeJS.ErrnoException).code }, 'a subscriber went away while an event was written to it');
        return undefined;
      },
    },
    wss,
  );
  return async () => {
    // 1012 (service restart): the gateway resubscribes at once from its last cursor, through the
    // load balancer to another replica. A peer that does not answer the close is cut after a second.
    const closed = [...wss.clients].map((client) => new Promise<void>((resolve) => client.once('close', () => resolve())));
    for (const client of wss.clients) client.close(SUBGRAPH_RESTART.code, SUBGRAPH_RESTART.reason);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closed), new Promise<void>((resolve) => (timer = setTimeout(resolve, 1000)))]);
    clearTimeout(timer);
    for (const client of wss.clients) client.terminate();
    await disposable.dispose();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  };
}
