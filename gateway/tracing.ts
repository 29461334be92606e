import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type SpanContext } from '@opentelemetry/api';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { getOperationAST, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { clip, inSpan, recordFailure, remoteContextOf, startServerSpan, tracerFor } from '../lib/tracing.ts';

/** The gateway's spans: the HTTP request's, and the operation's name and type on it. */
export interface GatewayTracing {
  /** Runs one request inside its SERVER span, which continues the client's `traceparent`; `route` is a template. */
  serve<T>(req: IncomingMessage, res: ServerResponse, run: () => Promise<T>, route?: string): Promise<T>;
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
    serve(req, res, run, route = '/graphql') {
      const { span, context: traced } = startServerSpan(tracer, req, res, route);
      if (route === '/graphql') requestSpans.add(span);
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

/** The streaming transports, as the span of an operation they carry names them. */
export type StreamingTransport = 'ws' | 'sse' | 'multipart';

/** What an operation over a streaming transport is, for its span. */
export interface StreamedOperation {
  document: DocumentNode;
  operationName?: string | null | undefined;
  /** The caller's headers, or a WebSocket's connectionParams: a `traceparent` there is continued. */
  headers: Record<string, string | string[] | undefined>;
  transport?: StreamingTransport | undefined;
}

/** The first error's code of a result that is not a stream, if it has errors. */
function errorCodeOf(result: unknown): string | undefined {
  if (!result || typeof result !== 'object' || Symbol.asyncIterator in result) return undefined;
  const errors = (result as { errors?: readonly { extensions?: { code?: unknown } }[] }).errors;
  if (!errors?.length) return undefined;
  const code = errors[0]?.extensions?.code;
  return typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR';
}

/**
 * The SERVER span of one operation over WebSocket or SSE, or undefined when traces are off. A
 * query or mutation's span lasts until its result; a subscription's until it is set up (or
 * refused), not as long as it stays open: its events are traces of their own (`createEventSpans`),
 * linked to it. Apollo Gateway's spans and the subgraphs' continue it, as over HTTP.
 */
export function createOperationSpans(): (<T>(operation: StreamedOperation, run: () => Promise<T>) => Promise<T>) | undefined {
  const tracer = tracerFor(GATEWAY_SERVICE);
  if (!tracer) return undefined;
  return async (operation, run) => {
    const ast = getOperationAST(operation.document, operation.operationName ?? undefined);
    const type = ast?.operation ?? 'unknown';
    const name = operation.operationName ?? ast?.name?.value;
    const parent = remoteContextOf(operation.headers);
    const span = tracer.startSpan(`GraphQL ${type}`, { kind: SpanKind.SERVER, attributes: { 'graphql.operation.type': type } }, parent);
    if (name) span.setAttribute('graphql.operation.name', clip(name));
    if (operation.transport) span.setAttribute('graphql.transport', operation.transport);
    requestSpans.add(span);
    try {
      const result = await context.with(trace.setSpan(parent, span), run);
      const code = errorCodeOf(result);
      if (code) {
        span.setAttribute('error.type', code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: code });
      }
      return result;
    } catch (error) {
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  };
}

/** What one event's span is told once the event went out. */
export interface EventOutcome {
  subscribers: number;
  /** The first error's code, when the event went out with errors. */
  errorType?: string | undefined;
}

/**
 * One CONSUMER span per event a subscription group executes, or undefined when traces are off:
 * each event is a trace of its own, linked to the span of the subscription that opened the group
 * (its subscribers may have come from many traces) and to the delivery that brought the event into
 * its subgraph (one event may reach many groups). The event's entity fetches and the subgraphs'
 * spans are its children.
 */
export function createEventSpans(): (<T>(operationName: string | undefined, links: readonly (SpanContext | undefined)[], run: (done: (outcome: EventOutcome) => void) => Promise<T>) => Promise<T>) | undefined {
  const tracer = tracerFor(GATEWAY_SERVICE);
  if (!tracer) return undefined;
  return async (operationName, links, run) => {
    const span = tracer.startSpan(
      'GraphQL subscription event',
      { kind: SpanKind.CONSUMER, root: true, attributes: { 'graphql.operation.type': 'subscription', ...(operationName ? { 'graphql.operation.name': clip(operationName) } : {}) }, links: links.flatMap((link) => (link ? [{ context: link }] : [])) },
      ROOT_CONTEXT,
    );
    try {
      return await context.with(trace.setSpan(ROOT_CONTEXT, span), () =>
        run(({ subscribers, errorType }) => {
          span.setAttribute('subscription.subscribers', subscribers);
          if (errorType) {
            span.setAttribute('error.type', errorType);
            span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
          }
        }),
      );
    } catch (error) {
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  };
}

/** The span context of the active span, to link an event's trace to the subscription that asked for it. */
export const activeSpanContext = (): SpanContext | undefined => trace.getActiveSpan()?.spanContext();
