import { readBoolean, readHost, readInt, readMetricsToken, readPort, readUrl, ConfigError, type Env } from '../lib/config.ts';
import { existsSync } from 'node:fs';
import { DEFAULT_MAX_BODY_BYTES } from '../lib/http.ts';
import { readTrustedProxies, type TrustedProxies } from '../lib/trustedProxies.ts';
import { readCorsSettings, type CorsSettings } from './cors.ts';
import { readOperationLimits, type OperationLimits } from '../lib/operationShapeLimits.ts';
import { SERVICES, defaultSubgraphUrl } from '../lib/services.ts';
import { readAuthSettings } from './auth/config.ts';
import type { AuthSettings } from './auth/authenticate.ts';
import type { ExplorerHintSettings } from './auth/explorerHints.ts';
import type { RateLimitSettings } from './rateLimit.ts';
import { readCircuitBreakerSettings, type CircuitBreakerSettings } from '../lib/circuitBreaker.ts';
import { readTrustedDocumentsSettings, type TrustedDocumentsSettings } from './trustedDocuments.ts';
import type { DropChannel } from './microCacheChannel.ts';
import { DEFAULT_SUBSCRIBER_QUEUED_BYTES } from './subscriptions/pushIterator.ts';

export interface GatewayConfig {
  port: number;
  host: string;
  /** Subgraph name to its GraphQL URL. */
  subgraphUrls: Record<string, string>;
  /** Apollo Sandbox on GET /graphql. */
  sandbox: boolean;
  /** Headers preset in Sandbox (demo credentials in development). */
  sandboxHeaders: Record<string, string>;
  /** The live recognition dashboard on GET /dashboard (its credential prefilled from `sandboxHeaders`). */
  dashboard: boolean;
  /** Deadline for one subgraph call. */
  subgraphTimeoutMs: number;
  /** The longest subgraph answer the gateway reads: a longer one is UPSTREAM_ERROR, cut off there. */
  maxSubgraphResponseBytes: number;
  /** Largest accepted request body. */
  maxBodyBytes: number;
  /** `/metrics` answers only `Authorization: Bearer <token>` when set (METRICS_TOKEN). */
  metricsToken: string | undefined;
  /** Path of the composed supergraph SDL. */
  supergraphPath: string;
  /** The clock the micro-cache's times to live run on (tests move it). @default Date.now */
  now?: () => number;
  /** The supergraph SDL itself, instead of reading `supergraphPath` (tests composing their own). */
  supergraphSdl?: string;
  /** Deepest nesting, most fields, aliases and root fields one operation may have. */
  limits: OperationLimits;
  /** Demand control: upstream calls one operation may cost, estimated before it runs and counted while it runs. */
  demand: { maxUpstreamCalls: number };
  /** Apollo Gateway's own usage telemetry to Apollo (and its cloud metadata probes). Off unless asked for. */
  vendorTelemetry: boolean;
  /** The gateway's public URL, on which download links are built; the request's Host when unset. */
  publicUrl?: string | undefined;
  /** Peers whose `X-Forwarded-Proto`/`X-Forwarded-Host` are believed when `publicUrl` is unset. None by default. */
  trustedProxies: TrustedProxies;
  /** Origins whose pages may call the graph from a browser (`gateway/cors.ts`). */
  cors: CorsSettings;
  /** Answers of 1 KiB or more compressed for clients that accept it (`gateway/compression.ts`). */
  compression: boolean;
  /** Sockets (or, behind a trusted proxy, WebSocket and SSE streams) one client address holds at once; 0 is off (`gateway/connectionCaps.ts`). */
  maxConnectionsPerAddress: number;
  /** graphql-js's "Did you mean ..." hints in error messages; they name schema members. Off in production. */
  schemaSuggestions: boolean;
  /** Bounds on the subscriptions one client can hold open. */
  subscriptionLimits: SubscriptionLimits;
  /** A graceful stop on SIGTERM: how long `/ready` fails before new connections are refused, and how long requests then get. */
  shutdown: { delayMs: number; graceMs: number };
  /** Identical subgraph reads with identical credentials in flight at once are made once. */
  dedupeReads: boolean;
  /** Reads of one credential to one subgraph that are ready at once go as one request, each answered as it finishes. */
  batchReads: boolean;
  /** How long a batch of reads gathers; 0 is until the event loop turns. */
  batchWindowMs: number;
  /** Reads of the fields an operator opted in, answered for a short while from memory (off by default). */
  microCache: MicroCacheSettings;
  /**
   * Each subscription event serialised once for all its identical subscribers, every frame built
   * around those bytes; off, graphql-ws and graphql-sse serialise it once per subscriber.
   */
  sharedPayloads: boolean;
  /** One structured log line per operation. */
  accessLog: boolean;
  /** Token buckets per caller and per client address (off unless a rate is set). */
  rateLimits: RateLimitSettings;
  /** Trusted documents (the manifest of operations clients may run) and automatic persisted queries. */
  trustedDocuments: TrustedDocumentsSettings;
  /** The graph's own OAuth 2.0 (off by default). */
  auth: AuthSettings;
  /** Where a partner's explorer gets a token, published at /.well-known/oauth-protected-resource. */
  explorer: ExplorerHintSettings;
  /**
   * The gateway's own fast paths beside Apollo's, each of which can be turned off to diagnose or
   * to compare. The pass-through serves only operations the single-fetch shortcut has planned.
   */
  fastPaths: FastPaths;
  /** One circuit breaker per subgraph (CIRCUIT_BREAKER_FAILURES, CIRCUIT_BREAKER_COOLDOWN_MS). */
  circuitBreaker: CircuitBreakerSettings;
}

export interface SubscriptionLimits {
  /** Operations open at once on one graphql-ws connection. @default 50 */
  perConnection: number;
  /** Subscriptions one credential holds open on this gateway, over every connection and transport. @default 2000 */
  perCredential: number;
  /** Distinct streams (operation and variables) one credential holds open to subgraphs; identical subscriptions share one. @default 50 */
  streamsPerCredential: number;
  /** Events queued for one subscriber that reads slower than they come; past it the subscriber is ended with SUBSCRIBER_TOO_SLOW. @default 10000 */
  queuedEventsPerSubscriber: number;
  /** Bytes of serialised events queued for one such subscriber; past it, ended the same way. Optional for configs built by hand. @default 8 MiB */
  queuedBytesPerSubscriber?: number;
}

export interface FastPaths {
  /** A one-subgraph plan's answer returned as the subgraph sent it, without Apollo's reshaping. */
  singleFetch: boolean;
  /** Repeats of such an operation answered without Apollo Server. */
  passThrough: boolean;
}

export interface MicroCacheSettings {
  /** Root field (`Query.rewardCatalog`) to how long its reads are kept, in ms; empty is off. */
  fields: ReadonlyMap<string, number>;
  /** Answers kept at once. @default 1000 */
  maxEntries: number;
  /** Bytes of answers kept at once. @default 16 MiB */
  maxBytes: number;
  /** REDIS_URL: the gateways on it tell each other of writes (gateway/microCacheChannel.ts). */
  redisUrl?: string | undefined;
  /** That channel, when the caller opens it; by default the gateway opens its own on `redisUrl` and closes it when it closes. */
  channel?: DropChannel | undefined;
}

/** `Query.rewardCatalog:2000,Query.dashboardStats:500`: each opted-in root field and its time to live in ms. */
function readMicroCacheFields(env: Env): Map<string, number> {
  const fields = new Map<string, number>();
  const raw = env.GATEWAY_MICRO_CACHE?.trim();
  if (!raw) return fields;
  for (const entry of raw.split(',')) {
    const match = /^\s*(Query\.[_A-Za-z][_0-9A-Za-z]*)\s*:\s*([0-9]{1,9})\s*$/.exec(entry);
    const ttlMs = match ? Number(match[2]) : 0;
    if (!match || ttlMs < 1 || ttlMs > 600_000) {
      throw new ConfigError(`GATEWAY_MICRO_CACHE must list Query fields with their time to live in ms (1 to 600000), such as Query.rewardCatalog:2000,Query.leaderboard:500; "${entry.trim().slice(0, 100)}" is not one`);
    }
    fields.set(match[1]!, ttlMs);
  }
  return fields;
}


/** `SUPERGRAPH_PATH`, a file that must exist: read at start, a missing one would stop the gateway with a bare ENOENT. */
function readSupergraphPath(env: Env): string {
  if (!env.SUPERGRAPH_PATH) return new URL('../schema/supergraph.graphql', import.meta.url).pathname;
  if (!existsSync(env.SUPERGRAPH_PATH)) throw new ConfigError(`SUPERGRAPH_PATH names no file: ${env.SUPERGRAPH_PATH}`);
  return env.SUPERGRAPH_PATH;
}

export function readGatewayConfig(env: Env, overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  const production = env.NODE_ENV === 'production';
  const subgraphUrls: Record<string, string> = {};
  for (const service of SERVICES) {
    subgraphUrls[service.name] = readUrl(env, service.env.subgraphUrl) ?? defaultSubgraphUrl(service);
  }
  let sandboxHeaders: Record<string, string> = {};
  if (env.SANDBOX_HEADERS) {
    try {
      const parsed = JSON.parse(env.SANDBOX_HEADERS) as unknown;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || !Object.values(parsed).every((value) => typeof value === 'string')) throw new SyntaxError('not an object of strings');
      sandboxHeaders = parsed as Record<string, string>;
    } catch {
      throw new ConfigError('SANDBOX_HEADERS must be a JSON object of header names to values, such as {"x-recognition-token":"..."}');
    }
  }
  const callerRate = readInt(env, 'RATE_LIMIT_CALLER_PER_SECOND', 0, { min: 0, max: 1_000_000 });
  const addressRate = readInt(env, 'RATE_LIMIT_ADDRESS_PER_SECOND', 0, { min: 0, max: 1_000_000 });
  return {
    port: readPort(env, 'GATEWAY_PORT', 4000),
    host: readHost(env),
    subgraphUrls: { ...subgraphUrls, ...overrides.subgraphUrls },
    sandbox: readBoolean(env, 'SANDBOX', !production),
    sandboxHeaders,
    dashboard: readBoolean(env, 'DASHBOARD', !production),
    subgraphTimeoutMs: readInt(env, 'SUBGRAPH_TIMEOUT_MS', 30_000, { min: 100, max: 300_000 }),
    maxSubgraphResponseBytes: readInt(env, 'MAX_SUBGRAPH_RESPONSE_BYTES', 64 * 1024 * 1024, { min: 64 * 1024, max: 1024 * 1024 * 1024 }),
    metricsToken: readMetricsToken(env),
    maxBodyBytes: readInt(env, 'MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, { min: 1024, max: 64 * 1024 * 1024 }),
    supergraphPath: readSupergraphPath(env),
    vendorTelemetry: readBoolean(env, 'APOLLO_VENDOR_TELEMETRY', false),
    limits: readOperationLimits(env),
    demand: {
      maxUpstreamCalls: readInt(env, 'MAX_OPERATION_UPSTREAM_CALLS', 1000, { min: 1, max: 1_000_000 }),
    },
    publicUrl: readUrl(env, 'PUBLIC_URL'),
    trustedProxies: readTrustedProxies(env),
    cors: readCorsSettings(env),
    compression: readBoolean(env, 'GATEWAY_COMPRESSION', true),
    maxConnectionsPerAddress: readInt(env, 'MAX_CONNECTIONS_PER_ADDRESS', 1000, { min: 0, max: 10_000_000 }),
    schemaSuggestions: readBoolean(env, 'SCHEMA_SUGGESTIONS', !production),
    subscriptionLimits: {
      perConnection: readInt(env, 'MAX_SUBSCRIPTIONS_PER_CONNECTION', 50, { min: 1, max: 100_000 }),
      perCredential: readInt(env, 'MAX_SUBSCRIPTIONS_PER_CREDENTIAL', 2000, { min: 1, max: 1_000_000 }),
      streamsPerCredential: readInt(env, 'MAX_SUBSCRIPTION_STREAMS_PER_CREDENTIAL', 50, { min: 1, max: 100_000 }),
      queuedEventsPerSubscriber: readInt(env, 'MAX_SUBSCRIBER_QUEUED_EVENTS', 10_000, { min: 1, max: 1_000_000 }),
      queuedBytesPerSubscriber: readInt(env, 'MAX_SUBSCRIBER_QUEUED_BYTES', DEFAULT_SUBSCRIBER_QUEUED_BYTES, { min: 16 * 1024, max: 1024 * 1024 * 1024 }),
    },
    shutdown: {
      delayMs: readInt(env, 'GATEWAY_DRAIN_DELAY_MS', 5000, { min: 0, max: 120_000 }),
      graceMs: readInt(env, 'GATEWAY_SHUTDOWN_GRACE_MS', 25_000, { min: 0, max: 600_000 }),
    },
    accessLog: readBoolean(env, 'ACCESS_LOG', true),
    dedupeReads: readBoolean(env, 'GATEWAY_DEDUPE_READS', true),
    batchReads: readBoolean(env, 'GATEWAY_BATCH_READS', true),
    batchWindowMs: readInt(env, 'GATEWAY_BATCH_WINDOW_MS', 0, { min: 0, max: 100 }),
    sharedPayloads: readBoolean(env, 'GATEWAY_SHARED_PAYLOADS', true),
    microCache: {
      fields: readMicroCacheFields(env),
      maxEntries: readInt(env, 'GATEWAY_MICRO_CACHE_MAX_ENTRIES', 1000, { min: 1, max: 1_000_000 }),
      maxBytes: readInt(env, 'GATEWAY_MICRO_CACHE_MAX_BYTES', 16 * 1024 * 1024, { min: 1024, max: 1024 * 1024 * 1024 }),
      redisUrl: readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
    },
    // A rate of 0 is off; a burst is twice the rate unless set.
    rateLimits: {
      caller: { perSecond: callerRate, burst: readInt(env, 'RATE_LIMIT_CALLER_BURST', Math.max(1, 2 * callerRate), { min: 1, max: 10_000_000 }) },
      address: { perSecond: addressRate, burst: readInt(env, 'RATE_LIMIT_ADDRESS_BURST', Math.max(1, 2 * addressRate), { min: 1, max: 10_000_000 }) },
      redisUrl: readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
    },
    trustedDocuments: readTrustedDocumentsSettings(env),
    ...readAuthSettings(env),
    fastPaths: {
      singleFetch: readBoolean(env, 'GATEWAY_SINGLE_FETCH', true),
      passThrough: readBoolean(env, 'GATEWAY_PASS_THROUGH', true),
    },
    circuitBreaker: readCircuitBreakerSettings(env),
    ...overrides,
  };
}
