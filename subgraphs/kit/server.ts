import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { DocumentNode } from 'graphql';
import { ApolloServer, type BaseContext } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { GraphQLSchema } from 'graphql';
import { apolloHandler } from '../../lib/apolloHttp.ts';
import { createDocumentStore } from '../../lib/documentStore.ts';
import { DEFAULT_MAX_BODY_BYTES, listen, requestUrl, sendJson, trimmedAsHeader, type Started } from '../../lib/http.ts';
import { createLogger, apolloLogger, type Logger } from '../../lib/logger.ts';
import { createInFlightRequests, type DrainSettings } from '../../lib/shutdown.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { formatGraphError } from '../../lib/errorFormatting.ts';
import { operationLimitsRule, SUBGRAPH_OPERATION_LIMITS, type OperationLimits, type OperationLimitsRule } from '../../lib/operationShapeLimits.ts';
import { compiledExecution } from './compiledExecution.ts';
import { createMetricsEndpoint } from '../../lib/metricsEndpoint.ts';
import { createRequestScope, type CallScope } from './callScope.ts';
import { createSubgraphTracing } from './tracing.ts';
import { createReadBatchHandler, isReadBatch } from './readBatches.ts';

/** An HTTP route beside `/graphql`: webhook ingestion, downloads. */
export interface SubgraphRoute {
  method: string;
  /** Exact path, or a prefix ending in `/*`. */
  path: string;
  handler(req: IncomingMessage, res: ServerResponse, url: URL): void | Promise<void>;
}

export interface SubgraphDefinition<Context extends BaseContext> {
  name: string;
  typeDefs: DocumentNode;
  resolvers: GraphQLResolverMap<Context>;
  /**
   * Builds one request's context (client, loaders) from its headers, its upstream calls bound to
   * `scope` (budget and cancellation) when it came over HTTP.
   */
  context(headers: IncomingMessage['headers'], scope?: CallScope): Context | Promise<Context>;
  /** Upstream calls one HTTP request may make, retries included (`MAX_REQUEST_UPSTREAM_CALLS`); the gateway's header may lower it. */
  maxRequestUpstreamCalls: number;
  metrics: Metrics;
  logger: Logger;
  routes?: SubgraphRoute[];
  /** Attaches anything else to the HTTP server, such as a WebSocket endpoint. */
  /** `limits`: the shape bound its `/graphql` validates with, and its token bound, for the WebSocket to use too. */
  attach?(server: http.Server, schema: GraphQLSchema, limits: OperationLimitsRule): void | (() => Promise<void>);
  /** Runs once the server listens, with its URL (e.g. to register a webhook pointing here). */
  afterListen?(url: string): Promise<void>;
  /** Releases what the definition owns (pools, event log). */
  dispose?(): Promise<void>;
}

/**
 * A caller's credential from the headers the gateway forwarded (or a WebSocket's connection
 * parameters): the first value, trimmed as a header is (spaces and tabs: a no-break space is part
 * of the value, as it is to the gateway's caps and rate limits); undefined when absent or blank.
 */
export function credentialHeader(headers: IncomingMessage['headers'] | Record<string, unknown>, name: string): string | undefined {
  const raw = headers[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (typeof value !== 'string') return undefined;
  const trimmed = trimmedAsHeader(value);
  return trimmed ? trimmed : undefined;
}

export interface StartOptions {
  port: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Queries compiled by graphql-jit, repeats served without Apollo Server; off, Apollo Server runs graphql-js. @default true */
  compiledExecution?: boolean;
  /** `/metrics` answers only `Authorization: Bearer <token>` when set. */
  metricsToken?: string | undefined;
  /** The shapes `/graphql` takes (`readSubgraphBasics`). @default SUBGRAPH_OPERATION_LIMITS */
  operationLimits?: OperationLimits;
}

/** A subgraph listening: where, how to stop it at once, and how to stop it gracefully (SIGTERM). */
export interface StartedSubgraph extends Started {
  /**
   * Subscribers are told to resubscribe elsewhere (close 1012), `/health` answers 503 for
   * `delayMs` so the load balancer takes the replica out, then new connections are refused and
   * requests in flight get `graceMs` to finish before the rest are cut and everything closes.
   */
  drain(settings: DrainSettings): Promise<void>;
}

const REQUEST_SCOPE = Symbol('request call scope');
type ScopedRequest = IncomingMessage & { [REQUEST_SCOPE]?: CallScope };

function routeMatches(route: SubgraphRoute, method: string, path: string): boolean {
  if (route.method !== method) return false;
  return route.path.endsWith('/*') ? path.startsWith(route.path.slice(0, -1)) : route.path === path;
}

/** The bootstrap every subgraph uses: Apollo subgraph on `/graphql`, `/health`, `/metrics`, its own routes. */
export async function startSubgraph<Context extends BaseContext>(definition: SubgraphDefinition<Context>, { port, host, compiledExecution: compiled = true, metricsToken, operationLimits = SUBGRAPH_OPERATION_LIMITS }: StartOptions): Promise<StartedSubgraph> {
  const { logger } = definition;
  // Apollo types the resolver map's context as unknown; ours is the subgraph's own.
  const schema = buildSubgraphSchema({ typeDefs: definition.typeDefs, resolvers: definition.resolvers as GraphQLResolverMap<unknown> });
  // Before anything compiles or runs the schema: both execution paths call the wrapped resolvers.
  const tracing = createSubgraphTracing(definition.name);
  tracing?.instrument(schema);
  const execution = compiled ? compiledExecution(schema) : undefined;
  const limits = operationLimitsRule(operationLimits);
  const apollo = new ApolloServer<Context>({
    ...(execution ? { gateway: execution } : { schema }),
    logger: apolloLogger(logger),
    // The process drains on SIGTERM itself (lib/shutdown.ts), not Apollo Server, which would stop at once.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    // The gateway always sends the operation's text. A hash Apollo had kept would run a mutation
    // whose text no check here ever saw (a batch of reads takes it for a read: it has no text).
    persistedQueries: false,
    formatError: formatGraphError(logger, { service: definition.name }),
    // The port is reachable without the gateway: a shape the gateway would refuse costs CPU here
    // too (55,000 aliases, 310 to 700 ms). Bounds with headroom for what the planner adds.
    validationRules: [limits],
    // And before that, the document's tokens: 20,000 trivial operations cost 330 ms here, past every rule.
    parseOptions: { maxTokens: operationLimits.maxTokens },
    // The gateway's operations, bounded by what their parsed documents hold (Apollo's default counts their JSON only).
    documentStore: createDocumentStore({ maxEntries: 5_000, maxBytes: 16 * 1024 * 1024 }),
    // Inline traces cost a timer per resolver; the gateway reports its own timings. Cache control
    // hooks every field to read @cacheControl hints that no schema of ours has: a list of 100
    // users spent a tenth of the subgraph's CPU in that instrumentation. Without either plugin,
    // Apollo leaves the resolvers unwrapped.
    plugins: [ApolloServerPluginLandingPageDisabled(), ApolloServerPluginInlineTraceDisabled(), ApolloServerPluginCacheControlDisabled()],
  });
  await apollo.start();
  // One scope per HTTP request, shared by the compiled path and Apollo Server's. On the request
  // itself: a WeakMap entry per request cost its set and get, and the collector's work on ephemerons.
  const scopeOf = (req: IncomingMessage) => (req as ScopedRequest)[REQUEST_SCOPE];
  const graphqlHandler = apolloHandler<Context>({
    server: apollo,
    context: async ({ req }) => definition.context(req.headers, scopeOf(req)),
    first: execution ? (body, req, res) => execution.serve(body, () => definition.context(req.headers, scopeOf(req)), req.headers.accept, res) : undefined,
  });
  const cap = definition.maxRequestUpstreamCalls;
  const readBatch = createReadBatchHandler<Context>({ server: apollo, execution, context: (headers, scope) => definition.context(headers, scope), cap, maxBodyBytes: DEFAULT_MAX_BODY_BYTES, maxTokens: operationLimits.maxTokens });
  const graphql = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (isReadBatch(req)) return readBatch(req, res);
    (req as ScopedRequest)[REQUEST_SCOPE] = createRequestScope(req, res, cap);
    return graphqlHandler(req, res, url);
  };
  const routes = definition.routes ?? [];
  const metricsEndpoint = createMetricsEndpoint(definition.metrics.registry, { token: metricsToken });
  let draining = false;
  const inFlight = createInFlightRequests();

  // Made once, not a closure per request: tsx, which keeps function names, renames each one made.
  const handle = (req: IncomingMessage, res: ServerResponse, url: URL, method: string, route: SubgraphRoute | undefined) =>
    route
      ? route.handler(req, res, url)
      : url.pathname === '/graphql'
        ? graphql(req, res, url)
        : url.pathname === '/health'
          ? sendJson(res, draining ? 503 : 200, { status: draining ? 'draining' : 'ok', subgraph: definition.name })
          : url.pathname === '/metrics'
            ? metricsEndpoint(req, res)
            : sendJson(res, 404, { message: `no route ${method} ${url.pathname}` });

  const server = http.createServer((req, res) => {
    const url = requestUrl(req);
    const method = (req.method ?? 'GET').toUpperCase();
    if (!url) return sendJson(res, 400, { message: 'bad request target' });
    inFlight.track(res);
    if (draining) {
      res.setHeader('connection', 'close');
      // Subscriptions closed: a WebSocket must open on another replica.
      if (req.headers.upgrade) return sendJson(res, 503, { message: `the ${definition.name} subgraph is restarting` });
    }
    const route = routes.find((candidate) => routeMatches(candidate, method, url.pathname));
    // Named by the route's template: a webhook receiver's path holds its secret.
    const tracedRoute = route ? route.path : url.pathname === '/graphql' ? '/graphql' : undefined;
    const work = tracing && tracedRoute ? tracing.serve(req, res, tracedRoute, () => handle(req, res, url, method, route)) : handle(req, res, url, method, route);
    Promise.resolve(work).catch((error: unknown) => {
      logger.error({ err: error instanceof Error ? { name: error.name, message: error.message } : String(error) }, 'request failed');
      if (!res.headersSent) sendJson(res, 500, { message: 'internal error' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  const attached = definition.attach?.(server, schema, limits);
  let detached: Promise<void> | undefined;
  const detach = () => (detached ??= attached ? attached() : Promise.resolve());
  const started = await listen(server, port, host);
  logger.info({ url: `${started.url}/graphql` }, `${definition.name} subgraph listening`);
  await definition.afterListen?.(started.url);
  const close = async () => {
    await detach();
    await started.close();
    await apollo.stop();
    await definition.dispose?.();
  };
  return {
    url: started.url,
    close,
    async drain({ delayMs, graceMs }) {
      if (draining) return;
      draining = true;
      logger.info({ delayMs, graceMs, inFlight: inFlight.count() }, 'draining: subscribers told to resubscribe elsewhere, /health answers 503');
      await detach();
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      server.close();
      server.closeIdleConnections();
      const unfinished = await inFlight.settled(graceMs);
      logger.info({ unfinished }, 'drained: closing');
      await close();
    },
  };
}

export { createLogger };
