import type http from 'node:http';
import { GraphQLError, specifiedRules, validate, type FormattedExecutionResult, type GraphQLSchema, type ValidationRule } from 'graphql';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from '../../lib/logger.ts';
import { formatGraphError } from '../../lib/errorFormatting.ts';
import { lowerCaseKeys, type Headers, type OperationRunner } from './operations.ts';

/**
 * graphql-ws (the graphql-transport-ws protocol) on the gateway's `/graphql`, by WebSocket upgrade.
 * Credentials travel in `connectionParams` under the same names as the HTTP headers.
 */
export function attachWebSocketTransport({ server, schema, runner, logger, rules = [], path = '/graphql' }: { server: http.Server; schema: GraphQLSchema; runner: OperationRunner; logger: Logger; rules?: readonly ValidationRule[]; path?: string }): (code?: number, reason?: string) => Promise<void> {
  const wss = new WebSocketServer({ server, path });
  const format = formatGraphError(logger);
  const disposable = useServer<Record<string, unknown> | undefined, Record<string, unknown>>(
    {
      schema,
      validate: (validationSchema, document) => validate(validationSchema, document, [...specifiedRules, ...rules]),
      context: (ctx) => ({ headers: lowerCaseKeys(ctx.connectionParams), remoteAddress: (ctx.extra as { request?: http.IncomingMessage }).request?.socket.remoteAddress }),
      subscribe: (args) => runner.subscribe({ ...args, ...(args.contextValue as { headers: Headers; remoteAddress?: string }) }),
      execute: (args) => runner.execute({ ...args, ...(args.contextValue as { headers: Headers; remoteAddress?: string }) }),
      // Every result of the runner is already formatted: send it as it is.
      onNext: (_ctx, _id, _payload, _args, result) => result as FormattedExecutionResult,
      // Validation errors come without a code; give them the one HTTP clients see.
      onError: (_ctx, _id, _payload, errors) =>
        errors.map((error) => {
          const coded = error.extensions?.code ? error : new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, extensions: { ...error.extensions, code: 'GRAPHQL_VALIDATION_FAILED' } });
          return format(coded.toJSON(), coded);
        }),
    },
    wss,
  );
  let detached: Promise<void> | undefined;
  // Closing with 1012 (service restart) tells graphql-ws clients to reconnect, to another replica.
  return (code = 1001, reason = 'Going away') =>
    (detached ??= (async () => {
      for (const client of wss.clients) client.close(code, reason);
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    })());
}
