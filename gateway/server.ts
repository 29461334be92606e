import http, { type IncomingHttpHeaders } from 'node:http';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../lib/config.ts';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { createDocumentStore } from '../lib/documentStore.ts';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { apolloHandler } from '../lib/apolloHttp.ts';
import { ClientDeparture, listen, requestUrl, sendJson, type Started } from '../lib/http.ts';
import { clientAddress } from '../lib/trustedProxies.ts';
import { createConnectionCaps, TOO_MANY_STREAMS } from './connectionCaps.ts';
import { apolloLogger, type Logger } from '../lib/logger.ts';
import { createMetrics } from '../lib/metrics.ts';
import { createMetricsEndpoint } from '../lib/metricsEndpoint.ts';
import { formatGraphError } from '../lib/errorFormatting.ts';
import type { GatewayConfig } from './config.ts';
import { createUndiciFetcher } from './fetcher.ts';
import { batchedReadMetrics, createOperationMetrics, metricsPlugin, microCacheMetrics, sharedReadMetrics, subscriptionMetrics } from './metricsPlugin.ts';
import { createMicroCache } from './microCache.ts';
import { createDropChannel } from './microCacheChannel.ts';
import { HttpRequestContext, type GatewayContext } from './context.ts';
import { createPassThrough } from './passThrough.ts';
import { checkReadiness } from './readiness.ts';
import { operationLimitsRule } from '../lib/operationShapeLimits.ts';
import { scalarLiteralsRule, withScalarParsers } from './scalarLiterals.ts';
import { createDemandControl, readCostTable } from './demandControl.ts';
import { demandControlPlugin } from './demandControlPlugin.ts';
import { createReadBatcher, type ReadBatcher } from './readBatches.ts';
import { SubgraphDataSource } from './subgraphDataSource.ts';
import { withDirectFetches } from './singleFetch.ts';
import { withResolvedOperation } from './operationResolution.ts';
import { withIntrospection } from './introspection.ts';
import { createPlanner } from './planner.ts';
import { createSubscriptionExecutor, type SubscriptionExecutor } from './subscriptions/executor.ts';
import { createOperationRunner } from './subscriptions/operations.ts';
import { createSseTransport } from './subscriptions/sse.ts';
import { createMultipartTransport } from './subscriptions/multipart.ts';
import { plainHttpSubscriptionsPlugin, refuseConditionalSubscriptionRoot } from './plainHttpSubscriptions.ts';
import { createCors } from './cors.ts';
import { createCompression } from './compression.ts';
import { attachWebSocketTransport } from './subscriptions/ws.ts';
import { sendRefusal } from './subscriptions/streamedRequests.ts';
import { createSharedPayloads } from './subscriptions/sharedPayloads.ts';
import { DOWNLOADS_PATH } from '../lib/downloads.ts';
import { createDownloadProxy, gatewayOrigin } from './downloads.ts';
import { createDashboard } from './dashboard.ts';
import { AuthFailure, createAuthenticator, type Authenticated } from './auth/authenticate.ts';
import { createFieldAccess, withFieldAccess } from './auth/access.ts';
import { readAccessRequirements, withoutAccessDirectives } from './auth/requirements.ts';
import { createRateLimiter, rateLimitedError } from './rateLimit.ts';
import { createExplorerHints } from './auth/explorerHints.ts';
import { accessLogPlugin, createAccessLog } from './accessLog.ts';
import { createBreakerGuards } from '../lib/circuitBreakerGuards.ts';
import { createTrustedDocuments } from './trustedDocuments.ts';
import { createGatewayTracing } from './tracing.ts';

/** What a GET names to be run rather than the page shown, as Apollo Server reads its query string. */
const OPERATION_PARAMS = ['query', 'extensions', 'documentId', 'operationName', 'variables'];

/**
 * Sandbox's page is public: it asks for nothing but the page, and carries the token box itself. The
 * query string is read decoded, as Apollo Server reads it: `%71uery=` is `query=`, and was once
 * served, schema and data, past authentication and the rate limits.
 */
function isLandingPage(req: http.IncomingMessage): boolean {
  if (req.method !== 'GET' || !String(req.headers.accept ?? '').includes('text/html')) return false;
  const search = req.url?.indexOf('?') ?? -1;
  if (search === -1) return true;
  const params = new URLSearchParams(req.url!.slice(search + 1));
  return !OPERATION_PARAMS.some((name) => params.has(name));
}

const SANDBOX_OFF = 'Apollo Sandbox is off on this gateway (SANDBOX). Send operations with POST /graphql, or GET /graphql?query=…';

export interface StartedGateway extends Started {
  /** The GraphQL endpoint (HTTP, WebSocket and SSE). */
  graphqlUrl: string;
  subscriptions: SubscriptionExecutor;
  /**
   * A graceful stop, for SIGTERM: `/ready` answers 503 and streaming clients are told to reconnect
   * (elsewhere) at once; new requests are still served for `delayMs`, while load balancers notice;
   * then no new connection is accepted, requests in flight get up to `graceMs` to finish, and
   * everything closes.
   */
  drain(options: { delayMs: number; graceMs: number }): Promise<void>;
}

/** Apollo Gateway over the static supergraph, on plain node:http, with health, readiness and metrics. */
export async function startGateway(config: GatewayConfig, logger: Logger): Promise<StartedGateway> {
  const supergraphSdl = config.supergraphSdl ?? readFileSync(config.supergraphPath, 'utf8');
  const fetcher = createUndiciFetcher({ timeoutMs: config.subgraphTimeoutMs, maxAnswerBytes: config.maxSubgraphResponseBytes });
  const metrics = createMetrics('gateway', { defaults: true });
  const metricsEndpoint = createMetricsEndpoint(metrics.registry, { token: config.metricsToken });
  // One data source per subgraph, shared by queries and by the entity fetches of subscription events.
  const dataSources = new Map<string, SubgraphDataSource>();
  const batchers: ReadBatcher[] = [];
  const planner = createPlanner(supergraphSdl);
  // A field named in GATEWAY_MICRO_CACHE that the graph lacks would silently be kept never.
  const queryFields = planner.graphqlApiSchema.getQueryType()?.getFields() ?? {};
  const unknown = [...config.microCache.fields.keys()].filter((field) => !Object.hasOwn(queryFields, field.slice('Query.'.length)));
  if (unknown.length) throw new ConfigError(`GATEWAY_MICRO_CACHE names fields the graph has no Query field for: ${unknown.join(', ')}`);
  // Gateways sharing a Redis tell each other of writes, so none answers a read from what a write
  // through another made stale (docs/REPLICAS.md). Only with a micro-cache: there is nothing else to drop.
  const { redisUrl, fields } = config.microCache;
  const ownChannel = !config.microCache.channel && redisUrl && fields.size ? createDropChannel(redisUrl, logger.child({ component: 'micro-cache' })) : undefined;
  const channel = config.microCache.channel ?? ownChannel;
  // Off unless the operator opted some root fields in; one for every subgraph, so its bounds are the process's.
  const microCache = fields.size ? createMicroCache({ ...config.microCache, channel, ...(config.now ? { now: config.now } : {}) }) : undefined;
  const breakerFor = createBreakerGuards({ settings: config.circuitBreaker, logger, registry: metrics.registry, prefix: 'gateway', describe: (name) => `the ${name} subgraph` });

  // Apollo Gateway reports to Apollo and probes cloud metadata endpoints at construction unless
  // this is set; a gateway in front of partners' data should not call out unasked.
  if (!config.vendorTelemetry) process.env.APOLLO_TELEMETRY_DISABLED = 'true';
  const gateway = new ApolloGateway({
    supergraphSdl: withoutAccessDirectives(supergraphSdl),
    logger: apolloLogger(logger),
    buildService: ({ name, url }) => {
      const subgraphUrl = config.subgraphUrls[name] ?? url ?? '';
      const batcher = config.batchReads
        ? createReadBatcher({
            url: subgraphUrl,
            fetcher,
            maxAnswerBytes: config.maxSubgraphResponseBytes,
            windowMs: config.batchWindowMs,
            onRefused: (status) => logger.warn({ subgraph: name, status }, 'the subgraph turned a batch of reads down: its reads go one by one from now on'),
          })
        : undefined;
      if (batcher) batchers.push(batcher);
      const source = new SubgraphDataSource(name, subgraphUrl, fetcher, config.dedupeReads, breakerFor(name), microCache, batcher);
      dataSources.set(name, source);
      return source;
    },
  });
  // Apollo Gateway checks variables against its own API schema: give it the custom scalars' parsers.
  gateway.onSchemaLoadOrUpdate(({ apiSchema }) => void withScalarParsers(apiSchema));

  const metadataUrl = config.publicUrl ? `${config.publicUrl}/.well-known/oauth-protected-resource` : undefined;
  const authenticator = createAuthenticator({ resourceMetadataUrl: metadataUrl, ...config.auth }, logger.child({ component: 'auth' }));
  const explorer = createExplorerHints(config.explorer, () => dataSources.get('gatewayAdmin'), logger.child({ component: 'auth' }));
  /** RFC 9728: where a partner's explorer learns which authorization server issues tokens for this graph. */
  const protectedResource = async (req: http.IncomingMessage) => ({
    resource: `${gatewayOrigin(config.publicUrl, req, config.trustedProxies)}/graphql`,
    bearer_methods_supported: ['header'],
    ...(await explorer.hints()),
  });
  const limiter = createRateLimiter(config.rateLimits);
  const tracing = createGatewayTracing();
  const accessLog = createAccessLog(logger.child({ component: 'access' }), config.accessLog);
  const access = authenticator.enabled ? createFieldAccess({ schema: planner.graphqlApiSchema, requirements: readAccessRequirements(supergraphSdl), maxTokens: config.limits.maxTokens }) : undefined;
  // The outcome of authenticating an HTTP request, for the context Apollo builds from it later.
  const authenticated = new WeakMap<http.IncomingMessage, Authenticated>();
  const limits = operationLimitsRule(config.limits);
  const rules = [limits, scalarLiteralsRule()];
  const format = formatGraphError(logger, { hideSuggestions: !config.schemaSuggestions });
  const demand = createDemandControl({ schema: planner.graphqlApiSchema, costs: readCostTable(supergraphSdl), ...config.demand });
  const operationMetrics = createOperationMetrics(metrics.registry);
  const trustedDocuments = createTrustedDocuments(config.trustedDocuments, { logger: logger.child({ component: 'trusted-documents' }), registry: metrics.registry });
  const { singleFetch, passThrough: passingThrough } = config.fastPaths;
  const passThrough = singleFetch && passingThrough ? createPassThrough({ schema: planner.graphqlApiSchema, dataSources, metrics: operationMetrics, demand, accessLog }) : undefined;
  const apollo = new ApolloServer<GatewayContext>({
    gateway: (() => {
      const shortcut = withIntrospection(singleFetch ? withDirectFetches(gateway, { planner, dataSources, passThrough }) : gateway, planner.graphqlApiSchema);
      return withResolvedOperation(access ? withFieldAccess(shortcut, access, (context) => (context as GatewayContext).principal) : shortcut);
    })(),
    logger: apolloLogger(logger),
    // The process drains on SIGTERM itself (lib/shutdown.ts): Apollo Server's own handler, on
    // wherever NODE_ENV is not `test`, stopped it at once and re-raised the signal, which ended the
    // process before anything drained.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    // Automatic persisted queries are the trusted documents' (every transport, one bounded cache):
    // by the time Apollo Server sees a request, an id has become its text or been refused.
    persistedQueries: false,
    // Apollo's default counts the documents' JSON, not the source text and tokens they keep: distinct
    // texts padded with comments held the whole text each, 76,000 of them (docs/TRUSTED_DOCUMENTS.md).
    documentStore: createDocumentStore({ maxEntries: 10_000, maxBytes: 32 * 1024 * 1024 }),
    // Bounded while parsing, before any rule walks it: 20,000 operations of one field each parsed
    // and validated in 350 ms, on every repeat, since no such document fits the store above.
    parseOptions: { maxTokens: config.limits.maxTokens },
    hideSchemaDetailsFromClientErrors: !config.schemaSuggestions,
    formatError: format,
    validationRules: rules,
    plugins: [
      config.sandbox
        ? ApolloServerPluginLandingPageLocalDefault({
            embed: { initialState: { sharedHeaders: config.sandboxHeaders }, endpointIsEditable: false },
            includeCookies: false,
          })
        : ApolloServerPluginLandingPageDisabled(),
      metricsPlugin<GatewayContext>(operationMetrics),
      accessLogPlugin(accessLog),
      plainHttpSubscriptionsPlugin(),
      demandControlPlugin(demand),
      ...(tracing ? [tracing.plugin] : []),
    ],
  });
  await apollo.start();

  // Each HTTP request's departure, told when its client goes away before the answer is written.
  const departures = new WeakMap<http.IncomingMessage, ClientDeparture>();
  const contextOf = (req: http.IncomingMessage): GatewayContext => {
    const caller = authenticated.get(req);
    return new HttpRequestContext((caller?.headers ?? req.headers) as IncomingHttpHeaders, gatewayOrigin(config.publicUrl, req, config.trustedProxies), caller?.principal, req.socket, departures.get(req));
  };
  const graphql = apolloHandler<GatewayContext>({
    server: apollo,
    context: async ({ req }) => contextOf(req),
    maxBodyBytes: config.maxBodyBytes,
    admit: (request) => {
      const admission = trustedDocuments.admitHttp(request);
      // Before Apollo Server, whose own validation throws (a 500) on a root @skip/@include with a variable.
      return 'refusal' in admission ? admission : (refuseConditionalSubscriptionRoot({ method: request.method, ...admission.admitted }, config.limits.maxTokens) ?? admission);
    },
    first: passThrough
      ? async (body, req, res) => {
          const context = contextOf(req);
          // The fast path serves remembered operations whole: not to a caller who may not see all of one.
          const query = (body as { query?: unknown } | undefined)?.query;
          if (access && (typeof query !== 'string' || !access.servesWhole(query, String((body as { operationName?: unknown }).operationName ?? '') || undefined, context.principal))) {
            return { served: false, context };
          }
          const outcome = await passThrough.serve(body, context, req.headers.accept, res);
          if (outcome.served) return outcome;
          if (outcome.prefetched) context.prefetched = outcome.prefetched;
          return { served: false, context };
        }
      : undefined,
  });
  // One for every transport: an event reaching subscribers over graphql-ws, SSE and multipart is
  // serialised once, and those bytes are what it weighs in a slow subscriber's queue.
  const payloads = config.sharedPayloads ? createSharedPayloads() : undefined;
  const { perCredential, streamsPerCredential, queuedEventsPerSubscriber, queuedBytesPerSubscriber } = config.subscriptionLimits;
  const executor = createSubscriptionExecutor({
    planner,
    dataSources,
    subgraphUrl: (name) => dataSources.get(name)?.url ?? '',
    logger,
    demand,
    format,
    limits: { subscriptions: perCredential, streams: streamsPerCredential, queuedEvents: queuedEventsPerSubscriber, queuedBytes: queuedBytesPerSubscriber },
    maxEventBytes: config.maxSubgraphResponseBytes,
    payloads,
  });
  subscriptionMetrics(metrics.registry, executor, payloads);
  sharedReadMetrics(metrics.registry, dataSources);
  batchedReadMetrics(metrics.registry, () => batchers);
  if (microCache) microCacheMetrics(metrics.registry, microCache);
  const runner = createOperationRunner(executor, apollo, authenticator.enabled || limiter.enabled ? { authenticator, access, limiter } : undefined);
  const sse = createSseTransport({ schema: executor.planner.graphqlApiSchema, runner, rules, maxBodyBytes: config.maxBodyBytes, format, trustedDocuments, authenticatedOf: (req) => authenticated.get(req), payloads });
  const multipart = createMultipartTransport({
    schema: executor.planner.graphqlApiSchema,
    runner,
    rules,
    maxBodyBytes: config.maxBodyBytes,
    format,
    trustedDocuments,
    authenticatedOf: (req) => authenticated.get(req),
    payloads,
    // A query or mutation sent with the multipart `Accept`, known for what it is once its body is
    // read: a request like any other from then on, which a drain waits for rather than ends.
    otherwise: (req, res, url, body) => {
      eventStreams.delete(res);
      countInFlight(res);
      departures.set(req, new ClientDeparture(res));
      return graphql(req, res, url, { body, admitted: true });
    },
  });
  /**
   * A request for an event stream (SSE or multipart), which lives as long as its subscription: not
   * waited for by a drain, counted against the per-address stream cap (a query sent with the
   * multipart `Accept` holds its place there until it is answered).
   */
  const streams = (req: http.IncomingMessage) => sse.accepts(req) || multipart.accepts(req);
  const downloads = createDownloadProxy(config.subgraphUrls, logger);
  const dashboard = config.dashboard ? createDashboard({ demoToken: config.sandboxHeaders['x-recognition-token'] }) : undefined;

  // Readiness asks every subgraph: probes (or anyone hammering /ready) share one answer a second.
  let lastReadiness: { at: number; answer: ReturnType<typeof checkReadiness> } | undefined;
  const currentReadiness = () => {
    if (!lastReadiness || Date.now() - lastReadiness.at >= 1000) lastReadiness = { at: Date.now(), answer: checkReadiness(fetcher, true, config.subgraphUrls) };
    return lastReadiness.answer;
  };
  let draining = false;
  // Requests being answered, streams excepted: a graceful stop waits for them.
  let inFlight = 0;
  const whenIdle = new Set<() => void>();
  const countInFlight = (res: http.ServerResponse) => {
    inFlight += 1;
    res.once('close', () => {
      inFlight -= 1;
      if (inFlight === 0) for (const resolve of whenIdle) resolve();
    });
  };
  // Open SSE and multipart streams: a drain ends them, so their clients subscribe again (to another replica) and resume.
  const eventStreams = new Set<http.ServerResponse>();
  const connectionCaps = createConnectionCaps(config.maxConnectionsPerAddress, config.trustedProxies);
  const cors = createCors(config.cors);
  const compress = createCompression(config.compression);
  // Declared once, not per request: a closure named per request costs a `name` property defined on
  // it each time (the TypeScript loader keeps function names).
  async function handle(req: http.IncomingMessage, res: http.ServerResponse, url: URL, streaming: boolean): Promise<unknown> {
    if (url.pathname.startsWith(DOWNLOADS_PATH)) return downloads.handle(req, res, url);
    if (dashboard?.handles(url.pathname)) return dashboard.handle(req, res, url.pathname);
    switch (url.pathname) {
      case '/graphql':
        // Apollo Server would answer a browser here with its CSRF refusal, which reads as an attack.
        if (!config.sandbox && isLandingPage(req)) return sendJson(res, 404, { message: SANDBOX_OFF });
        if ((authenticator.enabled || limiter.enabled) && !isLandingPage(req)) {
          let caller: Authenticated;
          try {
            caller = await authenticator.authenticate(req.headers, req.socket.remoteAddress);
          } catch (error) {
            if (!(error instanceof AuthFailure)) throw error;
            req.resume();
            return sendRefusal(req, res, error.status, [{ message: error.message, extensions: { code: error.status === 401 ? 'UNAUTHENTICATED' : 'UPSTREAM_UNAVAILABLE' } }], { 'www-authenticate': error.wwwAuthenticate });
          }
          const decision = await limiter.check(caller.headers, caller.principal, clientAddress(req, config.trustedProxies), req.socket);
          if (!decision.allowed) {
            req.resume();
            return sendRefusal(req, res, 429, [rateLimitedError(decision)], { 'retry-after': String(decision.retryAfterSeconds) });
          }
          authenticated.set(req, caller);
        }
        if (streaming) {
          const release = connectionCaps.admitStream(req);
          if (!release) {
            req.resume();
            return sendRefusal(req, res, 429, TOO_MANY_STREAMS.errors);
          }
          res.once('close', release);
          eventStreams.add(res);
          res.once('close', () => eventStreams.delete(res));
          // Multipart first: its `Accept` is the more specific, and graphql-sse claims any PUT or DELETE.
          return multipart.accepts(req) ? multipart.handle(req, res) : sse.handle(req, res);
        }
        departures.set(req, new ClientDeparture(res));
        return graphql(req, res, url);
      case '/.well-known/oauth-protected-resource':
        return sendJson(res, 200, await protectedResource(req));
      case '/health':
        return sendJson(res, 200, { status: 'ok' });
      case '/ready': {
        if (draining) return sendJson(res, 503, { ready: false, draining: true });
        const readiness = await currentReadiness();
        return sendJson(res, readiness.ready ? 200 : 503, readiness);
      }
      case '/metrics':
        return metricsEndpoint(req, res);
      default:
        return sendJson(res, 404, { message: `no route ${req.method} ${url.pathname}` });
    }
  }

  const server = http.createServer((req, res) => {
    const url = requestUrl(req);
    if (!url) return sendJson(res, 400, { message: 'bad request target' });
    if (cors.handle(req, res)) return;
    if (draining) {
      res.setHeader('connection', 'close');
      // The WebSocket transport has let go of upgrades: a client told to reconnect (1012) that comes
      // back here must try another replica, not read Apollo's answer to a plain GET (a CSRF 400).
      if (req.headers.upgrade) return sendJson(res, 503, { errors: [{ message: 'the gateway is restarting: connect again', extensions: { code: 'UPSTREAM_UNAVAILABLE' } }] }, { 'retry-after': '1' });
    }
    const streaming = url.pathname === '/graphql' && streams(req);
    if (!streaming) {
      compress(req, res);
      countInFlight(res);
    }
    // An SSE stream is not one span: each operation it carries has its own (`subscriptions/operations.ts`).
    // A download link is named by its template: its path is the link's only authority.
    const route = url.pathname === '/graphql' ? (streaming ? undefined : '/graphql') : url.pathname.startsWith(DOWNLOADS_PATH) ? `${DOWNLOADS_PATH}*` : undefined;
    const work = tracing && route ? tracing.serve(req, res, () => handle(req, res, url, streaming), route) : handle(req, res, url, streaming);
    work.catch((error: unknown) => {
      logger.error({ err: error instanceof Error ? { name: error.name, message: error.message } : String(error) }, 'request failed');
      if (!res.headersSent) sendJson(res, 500, { errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  connectionCaps.attach(server);
  const detachWebSockets = attachWebSocketTransport({
    server,
    schema: executor.planner.graphqlApiSchema,
    runner,
    format,
    rules,
    trustedDocuments,
    maxPayloadBytes: config.maxBodyBytes,
    maxOperationsPerConnection: config.subscriptionLimits.perConnection,
    payloads,
    trustedProxies: config.trustedProxies,
    admitStream: connectionCaps.admitStream,
    logger,
  });

  const started = await listen(server, config.port, config.host);
  logger.info({ url: `${started.url}/graphql` }, 'gateway listening');
  const close = async () => {
    executor.close();
    await detachWebSockets();
    await started.close();
    await apollo.stop();
    await fetcher.close();
    await authenticator.close();
    await limiter.close();
    await downloads.close();
    await ownChannel?.close();
  };
  return {
    url: started.url,
    graphqlUrl: `${started.url}/graphql`,
    subscriptions: executor,
    close,
    async drain({ delayMs, graceMs }) {
      if (draining) return;
      draining = true;
      logger.info({ delayMs, graceMs, inFlight }, 'draining: not ready; streaming clients told to reconnect');
      await detachWebSockets(1012, 'the gateway is restarting: reconnect and resume from your last cursor');
      multipart.drain([{ message: 'the gateway is restarting: subscribe again, with `after` set to the cursor of the last event received', extensions: { code: 'UPSTREAM_UNAVAILABLE' } }]);
      for (const res of eventStreams) res.end();
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      server.close();
      server.closeIdleConnections();
      if (inFlight > 0) {
        let resolveIdle!: () => void;
        const idle = new Promise<void>((resolve) => whenIdle.add((resolveIdle = resolve)));
        const timer = setTimeout(resolveIdle, graceMs);
        await idle;
        clearTimeout(timer);
        whenIdle.delete(resolveIdle);
      }
      logger.info({ unfinished: inFlight }, 'drained: closing');
      await close();
    },
  };
}
