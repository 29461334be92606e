import type { IncomingMessage, ServerResponse } from 'node:http';
import { specifiedRules, validate, type GraphQLSchema, type ValidationRule } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/http';
import type { Headers, OperationRunner } from './operations.ts';
import type { Authenticated } from '../auth/authenticate.ts';

/**
 * graphql-sse on the gateway's `/graphql` (distinct connections mode: POST with
 * `Accept: text/event-stream`). Credentials travel in the same headers as for queries.
 */
export function createSseTransport({
  schema,
  runner,
  rules = [],
  authenticatedOf = () => undefined,
}: {
  schema: GraphQLSchema;
  runner: OperationRunner;
  rules?: readonly ValidationRule[];
  /** What the gateway's HTTP layer established about the caller of this request, when its OAuth 2.0 is on. */
  authenticatedOf?: (req: IncomingMessage) => Authenticated | undefined;
}) {
  const handler = createHandler<{ headers: Headers; authenticated?: Authenticated | undefined }>({
    schema,
    validate: (validationSchema, document) => validate(validationSchema, document, [...specifiedRules, ...rules]),
    context: (req) => ({ headers: (req.raw as IncomingMessage).headers, authenticated: authenticatedOf(req.raw as IncomingMessage) }),
    subscribe: (args) => runner.subscribe({ ...args, headers: args.contextValue.headers, authenticated: args.contextValue.authenticated }),
    execute: (args) => runner.execute({ ...args, headers: args.contextValue.headers, authenticated: args.contextValue.authenticated }),
  });
  return {
    /**
     * Whether a request on `/graphql` is for this transport rather than plain HTTP: a stream
     * (distinct connections), or a reservation of single-connection mode (PUT, or a request
     * carrying the stream token).
     */
    accepts(req: IncomingMessage): boolean {
      return String(req.headers.accept ?? '').includes('text/event-stream') || req.method === 'PUT' || req.headers['x-graphql-event-stream-token'] !== undefined;
    },
    handle: (req: IncomingMessage, res: ServerResponse) => handler(req, res),
  };
}
