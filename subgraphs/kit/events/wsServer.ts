import type http from 'node:http';
import type { GraphQLSchema, GraphQLFormattedError } from 'graphql';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from '../../../lib/logger.ts';
import { formatGraphError } from '../../../lib/errorFormatting.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../../../lib/http.ts';
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
}

const lowerCaseKeys = (params: unknown): Record<string, unknown> =>
  Object.fromEntries(Object.entries(params && typeof params === 'object' ? params : {}).map(([name, value]) => [name.toLowerCase(), value]));

/** How a stopping subgraph closes its subscribers' sockets. */
export const SUBGRAPH_RESTART = { code: 1012, reason: 'the subgraph is restarting: resubscribe from your last cursor' } as const;

/**
 * graphql-ws on the subgraph's own `/graphql`: the gateway opens subscriptions here. Credentials
 * arrive in `connectionParams` under the same names as the HTTP headers.
 */
export function attachSubscriptionServer<Context extends object>({ server, schema, context, logger, service, path = '/graphql', maxPayloadBytes = DEFAULT_MAX_BODY_BYTES }: SubscriptionServerOptions<Context>): () => Promise<void> {
  const wss = new WebSocketServer({ server, path, maxPayload: maxPayloadBytes });
  const format = formatGraphError(logger, { service });
  const formatAll = (errors: readonly { toJSON(): GraphQLFormattedError }[]) => errors.map((error) => format(error.toJSON(), error));
  const disposable = useServer(
    {
      schema,
      context: (ctx) => context(lowerCaseKeys(ctx.connectionParams)),
      onNext: (_ctx, _id, _payload, args, result) => {
        const trace = eventTraceOf(args.contextValue);
        if (!result.errors && !trace) return undefined;
        // The event's ingestion, for the gateway to link its execution to; never passed on to clients.
        return { ...result, ...(result.errors ? { errors: formatAll(result.errors) } : {}), ...(trace ? { extensions: { ...result.extensions, [EVENT_TRACE_EXTENSION]: trace } } : {}) };
      },
      onError: (_ctx, _id, _payload, errors) => formatAll(errors),
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
