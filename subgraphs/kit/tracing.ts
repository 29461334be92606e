import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, createContextKey, SpanKind, trace, type Span, type Tracer } from '@opentelemetry/api';
import { isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { recordFailure, startServerSpan, tracerFor } from '../../lib/tracing.ts';
import { routeTemplateOf } from './paths.ts';
import type { RestCall, RestTransport, UpstreamObservation } from './transport.ts';

/**
 * Resolver spans one HTTP request may make. A list of 100 entities with a field resolver is 100
 * spans; past this many, the rest run untraced and are counted on the request's span.
 */
export const MAX_RESOLVER_SPANS = 200;

interface ResolverBudget {
  left: number;
  untraced: number;
}

/** The resolver spans left to the request being served; absent outside an HTTP request (events, WebSocket). */
const RESOLVER_BUDGET = createContextKey('resolver span budget');

/** `service.name` of a subgraph's spans when `OTEL_SERVICE_NAME` does not say. */
export const subgraphServiceName = (name: string): string => `${name}-subgraph`;

export interface SubgraphTracing {
  /** Runs one HTTP request inside its SERVER span, continuing the gateway's `traceparent`; `route` is a template. */
  serve<T>(req: IncomingMessage, res: ServerResponse, route: string, run: () => T): T;
  /** Wraps, in place, every resolver function of the schema (and `__resolveReference`) in a span. */
  instrument(schema: GraphQLSchema): void;
}

const isPromise = (value: unknown): value is Promise<unknown> => typeof (value as { then?: unknown } | null)?.then === 'function';

function traced(tracer: Tracer, name: string, attributes: Record<string, string>, run: () => unknown): unknown {
  const active = context.active();
  const budget = active.getValue(RESOLVER_BUDGET) as ResolverBudget | undefined;
  if (!budget) return run();
  if (budget.left <= 0) {
    budget.untraced += 1;
    return run();
  }
  budget.left -= 1;
  const span = tracer.startSpan(name, { attributes }, active);
  const settle = (value: unknown) => {
    // graphql-js takes a returned Error as the field's error.
    if (value instanceof Error) recordFailure(span, value);
    span.end();
    return value;
  };
  let result: unknown;
  try {
    result = context.with(trace.setSpan(active, span), run);
  } catch (error) {
    recordFailure(span, error);
    span.end();
    throw error;
  }
  if (!isPromise(result)) return settle(result);
  return result.then(settle, (error: unknown) => {
    recordFailure(span, error);
    span.end();
    throw error;
  });
}

/** Resolver spans hold the field's coordinates only: never its arguments, which are the caller's values. */
function tracedResolver(tracer: Tracer, typeName: string, fieldName: string, resolve: GraphQLFieldResolver<unknown, unknown>): GraphQLFieldResolver<unknown, unknown> {
  const name = `${typeName}.${fieldName}`;
  const attributes = { 'graphql.field.name': fieldName, 'graphql.field.parent_type': typeName };
  return (source, args, contextValue, info) => traced(tracer, name, attributes, () => resolve(source, args, contextValue, info));
}

type ResolveReference = (reference: unknown, contextValue: unknown, info: unknown) => unknown;

/** A subgraph's spans, or undefined when traces are off. */
export function createSubgraphTracing(name: string): SubgraphTracing | undefined {
  const tracer = tracerFor(subgraphServiceName(name));
  if (!tracer) return undefined;
  return {
    serve(req, res, route, run) {
      const budget: ResolverBudget = { left: MAX_RESOLVER_SPANS, untraced: 0 };
      const { context: request } = startServerSpan(tracer, req, res, route, (span) => {
        if (budget.untraced) span.setAttribute('graphql.resolver_spans.untraced', budget.untraced);
      });
      return context.with(request.setValue(RESOLVER_BUDGET, budget), run);
    },
    instrument(schema) {
      for (const type of Object.values(schema.getTypeMap())) {
        // Subscription events are not HTTP requests: nothing of theirs is traced.
        if (!isObjectType(type) || type.name.startsWith('__') || type === schema.getSubscriptionType()) continue;
        for (const field of Object.values(type.getFields())) {
          // Fields without a function of their own read a property: no work, no span.
          if (field.resolve) field.resolve = tracedResolver(tracer, type.name, field.name, field.resolve);
        }
        const subgraph = (type.extensions as { apollo?: { subgraph?: { resolveReference?: ResolveReference } } }).apollo?.subgraph;
        const resolveReference = subgraph?.resolveReference;
        if (subgraph && resolveReference) {
          const attributes = { 'graphql.field.name': '__resolveReference', 'graphql.field.parent_type': type.name };
          subgraph.resolveReference = (reference, contextValue, info) => traced(tracer, `${type.name}.__resolveReference`, attributes, () => resolveReference(reference, contextValue, info));
        }
      }
    },
  };
}

export interface UpstreamSpans {
  /** Records each attempt of the call in progress on its span, then hands the observation on. */
  observing(observe: (observation: UpstreamObservation) => void): (observation: UpstreamObservation) => void;
  /** The transport, each call of it a CLIENT span. */
  wrap(transport: RestTransport): RestTransport;
}

/**
 * One CLIENT span per upstream call, retries included (each attempt an event), named and
 * described by the route's template, never the URL: no id from the path, no query string (where
 * some services carry the credential), no body.
 */
export function createUpstreamSpans(service: string, baseUrl: string): UpstreamSpans | undefined {
  const tracer = tracerFor(subgraphServiceName(service));
  if (!tracer) return undefined;
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const callSpans = new WeakSet<Span>();
  const routeOf = (call: RestCall): string => {
    // A page link the upstream handed out is its own business: its path may hold the page token.
    if (call.followsCursor) return '{page link}';
    if (/^https?:\/\//i.test(call.path)) return routeTemplateOf(new URL(call.path).pathname);
    return `${basePath}${routeTemplateOf(call.path)}`;
  };
  function traceCall<T>(call: RestCall, perform: () => Promise<T>): Promise<T> {
    const route = routeOf(call);
    const attributes = {
      'peer.service': service,
      'upstream.operation': call.operation,
      'http.request.method': call.method,
      'url.template': route,
      'server.address': base.hostname,
      ...(base.port ? { 'server.port': Number(base.port) } : {}),
    };
    return tracer!.startActiveSpan(`${call.method} ${route}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      callSpans.add(span);
      try {
        return await perform();
      } catch (error) {
        const status = (error as { extensions?: { status?: unknown } }).extensions?.status;
        if (typeof status === 'number') span.setAttribute('http.response.status_code', status);
        recordFailure(span, error);
        throw error;
      } finally {
        span.end();
      }
    });
  }
  return {
    observing(observe) {
      return (observation) => {
        const span = trace.getActiveSpan();
        if (span && callSpans.has(span)) {
          const outcome = observation.status === 'error' ? { 'error.type': 'connection' } : { 'http.response.status_code': observation.status };
          span.addEvent('upstream.attempt', { attempt: observation.attempt, 'duration.ms': Math.round(observation.durationMs), ...outcome });
          if (observation.status !== 'error') span.setAttribute('http.response.status_code', observation.status);
          if (observation.attempt > 1) span.setAttribute('http.request.resend_count', observation.attempt - 1);
        }
        observe(observation);
      };
    },
    wrap(transport) {
      return {
        ...transport,
        request: (call) => traceCall(call, () => transport.request(call)),
        lookup: (call) => traceCall(call, () => transport.lookup(call)),
        stream: (call) => traceCall(call, () => transport.stream(call)),
      };
    },
  };
}
