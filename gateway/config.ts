import { readBoolean, readInt, readPort, readUrl, ConfigError, type Env } from '../lib/config.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../lib/http.ts';
import { readTrustedProxies, type TrustedProxies } from '../lib/trustedProxies.ts';
import { SUBGRAPHS, defaultSubgraphUrl, subgraphUrlEnv } from './subgraphs.ts';
import { readAuthSettings } from './auth/config.ts';
import type { AuthSettings } from './auth/authenticate.ts';

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
  /** Largest accepted request body. */
  maxBodyBytes: number;
  /** Path of the composed supergraph SDL. */
  supergraphPath: string;
  /** The supergraph SDL itself, instead of reading `supergraphPath` (tests composing their own). */
  supergraphSdl?: string;
  /** Deepest nesting and most fields one operation may have. */
  limits: { maxDepth: number; maxFields: number };
  /** Apollo Gateway's own usage telemetry to Apollo (and its cloud metadata probes). Off unless asked for. */
  vendorTelemetry: boolean;
  /** The gateway's public URL, on which download links are built; the request's Host when unset. */
  publicUrl?: string | undefined;
  /** Peers whose `X-Forwarded-Proto`/`X-Forwarded-Host` are believed when `publicUrl` is unset. None by default. */
  trustedProxies: TrustedProxies;
  /** graphql-js's "Did you mean ..." hints in error messages; they name schema members. Off in production. */
  schemaSuggestions: boolean;
  /** Bounds on the subscriptions one client can hold open. */
  subscriptionLimits: SubscriptionLimits;
  /** The graph's own OAuth 2.0 (off by default). */
  auth: AuthSettings;
  /** Where a partner's explorer gets a token, published at /.well-known/oauth-protected-resource. */
  explorer: { authorizationServers: string[]; tokenUrl?: string | undefined; authorizeUrl?: string | undefined; scopes: string[] };
}

export interface SubscriptionLimits {
  /** Operations open at once on one graphql-ws connection. @default 50 */
  perConnection: number;
  /** Subscriptions one credential holds open on this gateway, over every connection and transport. @default 2000 */
  perCredential: number;
  /** Distinct streams (operation and variables) one credential holds open to subgraphs; identical subscriptions share one. @default 50 */
  streamsPerCredential: number;
}

export function readGatewayConfig(env: Env, overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  const production = env.NODE_ENV === 'production';
  const subgraphUrls: Record<string, string> = {};
  for (const entry of SUBGRAPHS) {
    subgraphUrls[entry.name] = readUrl(env, subgraphUrlEnv(entry.name)) ?? defaultSubgraphUrl(entry);
  }
  let sandboxHeaders: Record<string, string> = {};
  if (env.SANDBOX_HEADERS) {
    try {
      sandboxHeaders = JSON.parse(env.SANDBOX_HEADERS) as Record<string, string>;
    } catch {
      throw new ConfigError('SANDBOX_HEADERS must be a JSON object of header names to values, such as {"x-recognition-token":"..."}');
    }
  }
  return {
    port: readPort(env, 'GATEWAY_PORT', 4000),
    host: env.HOST ?? '127.0.0.1',
    subgraphUrls: { ...subgraphUrls, ...overrides.subgraphUrls },
    sandbox: readBoolean(env, 'SANDBOX', !production),
    sandboxHeaders,
    dashboard: readBoolean(env, 'DASHBOARD', !production),
    subgraphTimeoutMs: readInt(env, 'SUBGRAPH_TIMEOUT_MS', 30_000, { min: 100, max: 300_000 }),
    maxBodyBytes: readInt(env, 'MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, { min: 1024, max: 64 * 1024 * 1024 }),
    supergraphPath: env.SUPERGRAPH_PATH ?? new URL('../schema/supergraph.graphql', import.meta.url).pathname,
    vendorTelemetry: readBoolean(env, 'APOLLO_VENDOR_TELEMETRY', false),
    limits: {
      maxDepth: readInt(env, 'MAX_QUERY_DEPTH', 12, { min: 2, max: 100 }),
      maxFields: readInt(env, 'MAX_QUERY_FIELDS', 1000, { min: 10, max: 100_000 }),
    },
    publicUrl: readUrl(env, 'PUBLIC_URL'),
    trustedProxies: readTrustedProxies(env),
    schemaSuggestions: readBoolean(env, 'SCHEMA_SUGGESTIONS', !production),
    subscriptionLimits: {
      perConnection: readInt(env, 'MAX_SUBSCRIPTIONS_PER_CONNECTION', 50, { min: 1, max: 100_000 }),
      perCredential: readInt(env, 'MAX_SUBSCRIPTIONS_PER_CREDENTIAL', 2000, { min: 1, max: 1_000_000 }),
      streamsPerCredential: readInt(env, 'MAX_SUBSCRIPTION_STREAMS_PER_CREDENTIAL', 50, { min: 1, max: 100_000 }),
    },
    ...readAuthSettings(env),
    ...overrides,
  };
}
