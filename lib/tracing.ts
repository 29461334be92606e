/**
 * OpenTelemetry traces, exported over OTLP/HTTP (JSON) when the standard `OTEL_*` settings ask for
 * them. Every process's main calls `startTracing` before it builds anything; the parts that make
 * spans ask `tracerFor` once, when they are built, and hold no tracer (and pay nothing per request)
 * when tracing is off: no provider is then registered and `@opentelemetry/api` stays a no-op.
 *
 * What a span may hold is decided where it is made (docs/TRACING.md, "What is never recorded"):
 * names of things (routes as templates, fields, services, error codes), never a value a caller
 * sent, a credential or a query string.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, isSpanContextValid, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type SpanContext, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ConfigError, readInt, readUrl, type Env } from './config.ts';

export type TracingConfig =
  | { enabled: false }
  | {
      enabled: true;
      /** `resource.service.name` of the process's spans. */
      serviceName: string;
      /** Where spans are POSTed: the traces endpoint, or the base endpoint plus `/v1/traces`. */
      url: string;
      /** Longest attribute value kept; longer ones are cut by the SDK. */
      attributeValueLengthLimit: number;
    };

/** The OpenTelemetry specification's default is no limit: an operation name could then be any size. */
const DEFAULT_ATTRIBUTE_VALUE_LENGTH_LIMIT = 1024;

/**
 * The standard variables, read as the OpenTelemetry specification reads them: traces go out only
 * when an OTLP endpoint is set, unless `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
 */
export function readTracingConfig(env: Env, defaultServiceName: string): TracingConfig {
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase();
  if (disabled !== undefined && disabled !== '' && disabled !== 'true' && disabled !== 'false') {
    throw new ConfigError(`OTEL_SDK_DISABLED must be true or false; got "${env.OTEL_SDK_DISABLED}".`);
  }
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter !== undefined && exporter !== '' && exporter !== 'otlp' && exporter !== 'none') {
    throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none (this graph exports OTLP over HTTP only); got "${env.OTEL_TRACES_EXPORTER}".`);
  }
  const tracesEndpoint = readUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = readUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const attributeValueLengthLimit = readInt(env, 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT', DEFAULT_ATTRIBUTE_VALUE_LENGTH_LIMIT, { min: 16, max: 1024 * 1024 });
  if (disabled === 'true' || exporter === 'none' || (!tracesEndpoint && !endpoint)) return { enabled: false };
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || defaultServiceName;
  // The signal-specific endpoint is used as given; the base one gets the signal's path (the specification's rule).
  const url = tracesEndpoint ?? `${endpoint}/v1/traces`;
  return { enabled: true, serviceName, url, attributeValueLengthLimit };
}

interface Tracing {
  config: Extract<TracingConfig, { enabled: true }>;
  /** The registered provider's service; Apollo Gateway's own spans go to it. */
  mainService: string;
  /** One service per process, or (`npm start`) one provider per part, each with its own `service.name`. */
  perService: boolean;
  providers: Map<string, NodeTracerProvider>;
  createProvider(serviceName: string): NodeTracerProvider;
}

let tracing: Tracing | undefined;

/** The SDK, loaded only by a process that exports traces. */
async function loadSdk() {
  const [{ W3CTraceContextPropagator }, { OTLPTraceExporter }, { defaultResource, resourceFromAttributes }, { BatchSpanProcessor, NodeTracerProvider }, { ATTR_SERVICE_NAME }] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  return {
    propagator: () => new W3CTraceContextPropagator(),
    provider: (config: Extract<TracingConfig, { enabled: true }>, serviceName: string): NodeTracerProvider =>
      new NodeTracerProvider({
        resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName })),
        spanLimits: { attributeValueLengthLimit: config.attributeValueLengthLimit },
        // Bounded by the SDK's defaults (or OTEL_BSP_*): 2048 spans queued at most, then dropped, never buffered without end.
        spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.url }))],
      }),
  };
}

export interface StartTracingOptions {
  /** `service.name` when `OTEL_SERVICE_NAME` is unset: `gateway`, `recognition-subgraph`... */
  serviceName: string;
  /**
   * The process hosts several parts (`npm start`): each part's spans carry its own service name
   * (`tracerFor`'s), and `OTEL_SERVICE_NAME` is not read. `serviceName` names the part whose
   * provider is registered globally, where libraries (Apollo Gateway) find it.
   */
  perService?: boolean;
}

/**
 * Registers the tracer provider when the settings ask for traces; returns whether they do. Called
 * first by every main, before anything that makes spans is built.
 */
export async function startTracing(env: Env, { serviceName, perService = false }: StartTracingOptions): Promise<boolean> {
  if (tracing) throw new Error('tracing is started once per process');
  const config = readTracingConfig(perService ? { ...env, OTEL_SERVICE_NAME: undefined } : env, serviceName);
  if (!config.enabled) return false;
  const sdk = await loadSdk();
  const provider = sdk.provider(config, config.serviceName);
  // Only the W3C trace context travels: a client's `baggage` is not handed on to the subgraphs.
  provider.register({ propagator: sdk.propagator() });
  tracing = { config, mainService: config.serviceName, perService, providers: new Map([[config.serviceName, provider]]), createProvider: (name) => sdk.provider(config, name) };
  return true;
}

/** The tracer a part of the process makes its spans with; undefined when tracing is off. */
export function tracerFor(serviceName: string): Tracer | undefined {
  if (!tracing) return undefined;
  const name = tracing.perService ? serviceName : tracing.mainService;
  let provider = tracing.providers.get(name);
  if (!provider) {
    provider = tracing.createProvider(name);
    tracing.providers.set(name, provider);
  }
  return provider.getTracer(name);
}

/**
 * Sends the spans still queued and stops exporting; at most `timeoutMs`, so that a collector out
 * of reach cannot hold a stopping process. Nothing to do when tracing is off.
 */
export async function stopTracing(timeoutMs = 5000): Promise<void> {
  const current = tracing;
  if (!current) return;
  tracing = undefined;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  await Promise.race([Promise.allSettled([...current.providers.values()].map((provider) => provider.shutdown())), late]);
  clearTimeout(timer);
}

/** A value cut to `max` characters: operation names are the caller's text. */
export const clip = (text: string, max = 100): string => (text.length > max ? text.slice(0, max) : text);

const headerGetter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/**
 * The context a request continues: the caller's `traceparent` (and `tracestate`) when valid, else a
 * new trace. Extracted from the root context, never from whatever context the socket was opened in.
 */
export function remoteContextOf(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, headers, headerGetter);
}

/**
 * Where a subgraph's subscription result carries the `traceparent` of the delivery that brought its
 * event in (its `extensions`); the gateway links the event's execution to it and passes it on to
 * no one.
 */
export const EVENT_TRACE_EXTENSION = 'eventTraceparent';

/** A W3C `traceparent` as a remote span context, or undefined when it is not a valid one. */
export function spanContextOf(traceparent: unknown): SpanContext | undefined {
  if (typeof traceparent !== 'string' || traceparent.length > 64) return undefined;
  const parsed = parseTraceParent(traceparent);
  return parsed && isSpanContextValid(parsed) ? { ...parsed, isRemote: true } : undefined;
}

/** Adds `traceparent` (and `tracestate`) for the active span to headers about to be sent; returns them. */
export function withTraceContext<Headers extends Record<string, string>>(headers: Headers): Headers {
  propagation.inject(context.active(), headers);
  return headers;
}

/** The GraphQL code of an error (`extensions.code`), its name otherwise: never its message, which may quote the caller's input. */
export function errorTypeOf(error: unknown): string {
  const code = (error as { extensions?: { code?: unknown } } | undefined)?.extensions?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'Error';
}

/**
 * Marks a span failed. The exception event carries the error's type only: messages can quote
 * variables, path ids or upstream words that echo them, so none is recorded.
 */
export function recordFailure(span: Span, error: unknown): void {
  const type = errorTypeOf(error);
  span.setAttribute('error.type', type);
  span.addEvent('exception', { 'exception.type': type });
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

/**
 * The SERVER span of one HTTP request, continuing the caller's trace, named by the route's
 * template (`POST /graphql`, `POST /webhooks/recognition/*`): never the URL itself, whose path may hold a
 * secret (webhook receivers) and whose query string may hold anything. It ends when the response
 * is over, with its status (`beforeEnd` may add what the request counted). Returns the span and
 * the context to run the request in.
 */
export function startServerSpan(tracer: Tracer, req: IncomingMessage, res: ServerResponse, route: string, beforeEnd?: (span: Span) => void): { span: Span; context: Context } {
  const method = (req.method ?? 'GET').toUpperCase();
  const parent = remoteContextOf(req.headers);
  const span = tracer.startSpan(`${method} ${route}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route } }, parent);
  res.once('close', () => {
    beforeEnd?.(span);
    span.setAttribute('http.response.status_code', res.statusCode);
    if (!res.writableFinished) span.setAttribute('error.type', 'connection_closed');
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: String(res.statusCode) });
    span.end();
  });
  return { span, context: trace.setSpan(parent, span) };
}

/**
 * Runs `work` in a new INTERNAL (or `kind`) span of the active trace, ended when it settles; a
 * failure is recorded by its type only (`recordFailure`).
 */
export function inSpan<T>(tracer: Tracer, name: string, attributes: Record<string, string | number | boolean>, work: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}
