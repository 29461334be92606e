import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, trace, type Span } from '@opentelemetry/api';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import type { OperationDefinitionNode } from 'graphql';
import { clip, inSpan, startServerSpan, tracerFor } from '../lib/tracing.ts';

/** The gateway's spans: the HTTP request's, and the operation's name and type on it. */
export interface GatewayTracing {
  /** Runs one `/graphql` request inside its SERVER span, which continues the client's `traceparent`. */
  serve<T>(req: IncomingMessage, res: ServerResponse, run: () => Promise<T>): Promise<T>;
  /** Names the operation on the request's span once Apollo Server has resolved it. */
  plugin: ApolloServerPlugin<BaseContext>;
}

export const GATEWAY_SERVICE = 'gateway';

/** The spans of requests to `/graphql`, which the operation's name and type are set on. */
const requestSpans = new WeakSet<Span>();

/** Names the operation on the active request's span, if it is one. */
function nameOperation(type: string, name: string | null | undefined): void {
  const span = trace.getActiveSpan();
  if (!span || !requestSpans.has(span)) return;
  // The name is the client's text: kept short, as the access log keeps it.
  if (name) span.setAttribute('graphql.operation.name', clip(name));
  span.setAttribute('graphql.operation.type', type);
}

/**
 * The gateway's tracing, or undefined when traces are off (then nothing is hooked in). Apollo
 * Gateway makes its own spans below the request's (`gateway.request`, `gateway.plan`,
 * `gateway.fetch`...) through the registered provider.
 */
export function createGatewayTracing(): GatewayTracing | undefined {
  const tracer = tracerFor(GATEWAY_SERVICE);
  if (!tracer) return undefined;
  return {
    serve(req, res, run) {
      const { span, context: traced } = startServerSpan(tracer, req, res, '/graphql');
      requestSpans.add(span);
      return context.with(traced, run);
    },
    plugin: {
      async requestDidStart() {
        return {
          async didResolveOperation({ operationName, operation }) {
            if (operation) nameOperation(operation.operation, operationName);
          },
        };
      },
    },
  };
}

/**
 * A subgraph fetch of the fast paths (`gateway/passThrough.ts`, `gateway/singleFetch.ts`), which
 * skip Apollo's executor and so its `gateway.fetch` span: the same span, made here (and the
 * pass-through, which skips Apollo Server's plugins too, names the operation on the request's
 * span). When traces are off the fetch is run as it is.
 */
export function createFetchSpans(path: 'pass-through' | 'single-fetch'): <T>(serviceName: string, operation: OperationDefinitionNode, fetch: () => Promise<T>) => Promise<T> {
  const tracer = tracerFor(GATEWAY_SERVICE);
  if (!tracer) return (_serviceName, _operation, fetch) => fetch();
  return (serviceName, operation, fetch) => {
    nameOperation(operation.operation, operation.name?.value);
    return inSpan(tracer, 'gateway.fetch', { service: serviceName, 'gateway.fast_path': path }, () => fetch());
  };
}
