import { readOperationLimits, withSubgraphHeadroom, type OperationLimits } from './operationShapeLimits.ts';
import { readBoolean, readHost, readInt, readMetricsToken, readPort, readUrl, type Env } from './config.ts';
import { readCircuitBreakerSettings, type CircuitBreakerSettings } from './circuitBreaker.ts';

/**
 * The one list of the graph's REST services: names, default ports, settings' names and the
 * caller's credential headers are written here and read by the gateway, composition, the stack,
 * the subgraphs' and emulators' config and the logger's redaction.
 *
 * Adding a service: one entry below, one in stack/services.ts (its emulator and subgraph
 * factories, its demo credential) and one in codegen.ts. Composition and the stack go over every
 * entry, so an entry needs `schema/<name>.graphql` the day it is added.
 */

export interface ServiceDefinition<Headers extends Readonly<Record<string, string>> = Readonly<Record<string, string>>> {
  /** The subgraph's name in the supergraph, its schema file `schema/<name>.graphql` and its folders. */
  name: string;
  /** Where `npm start` runs its subgraph. */
  subgraphPort: number;
  /** Where `npm start` runs its emulator. */
  emulatorPort: number;
  /**
   * The gateway headers that carry a caller's credential for this service, by what each holds. The
   * gateway forwards them to this service's subgraph and to no other; logs redact them.
   */
  credentialHeaders: Headers;
}

export interface ServiceEntry<Headers extends Readonly<Record<string, string>> = Readonly<Record<string, string>>> extends ServiceDefinition<Headers> {
  /** The settings' names, `<NAME>_…` with the name in upper snake case. */
  env: {
    /** The upstream's base URL; unset, the subgraph talks to the emulator on `emulatorPort`. */
    apiUrl: string;
    subgraphPort: string;
    emulatorPort: string;
    /** The gateway's URL for the subgraph, overriding `http://127.0.0.1:<subgraphPort>/graphql`. */
    subgraphUrl: string;
    /** The subgraph's deadline for one upstream call, in milliseconds. */
    timeout: string;
    /** The longest upstream answer body the subgraph reads, in bytes. */
    maxResponseBytes: string;
    /** Connections to the upstream one caller may hold at once. */
    connectionsPerCaller: string;
    /** Calls one caller may have waiting for a connection to the upstream. */
    maxWaitingPerCaller: string;
  };
}

/** `gatewayAdmin` → `GATEWAY_ADMIN`. */
export const envPrefix = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/-/g, '_').toUpperCase();

function defineService<const Headers extends Readonly<Record<string, string>>>(definition: ServiceDefinition<Headers>): ServiceEntry<Headers> {
  const prefix = envPrefix(definition.name);
  return {
    ...definition,
    env: {
      apiUrl: `${prefix}_API_URL`,
      subgraphPort: `${prefix}_SUBGRAPH_PORT`,
      emulatorPort: `${prefix}_EMULATOR_PORT`,
      subgraphUrl: `${prefix}_SUBGRAPH_URL`,
      timeout: `${prefix}_TIMEOUT_MS`,
      maxResponseBytes: `${prefix}_MAX_RESPONSE_BYTES`,
      connectionsPerCaller: `${prefix}_CONNECTIONS_PER_CALLER`,
      maxWaitingPerCaller: `${prefix}_MAX_WAITING_PER_CALLER`,
    },
  };
}

export const SERVICE_ENTRY = {
  recognition: defineService({ name: 'recognition', subgraphPort: 4001, emulatorPort: 4101, credentialHeaders: { token: 'x-recognition-token' } }),
  marketplace: defineService({
    name: 'marketplace',
    subgraphPort: 4002,
    emulatorPort: 4102,
    credentialHeaders: { email: 'x-marketplace-email', apiKey: 'x-marketplace-api-key', accountKey: 'x-marketplace-account-key', userToken: 'x-marketplace-user-token' },
  }),
  dashboards: defineService({ name: 'dashboards', subgraphPort: 4003, emulatorPort: 4103, credentialHeaders: { token: 'x-dashboards-token' } }),
  messaging: defineService({ name: 'messaging', subgraphPort: 4004, emulatorPort: 4104, credentialHeaders: { token: 'x-messaging-token' } }),
  imports: defineService({ name: 'imports', subgraphPort: 4005, emulatorPort: 4105, credentialHeaders: { apiKey: 'x-imports-apikey' } }),
  // Not a service's credential but an administrator's proof (the admin interface has none of its
  // own): it must reach this subgraph and no other, and never a log.
  gatewayAdmin: defineService({ name: 'gatewayAdmin', subgraphPort: 4006, emulatorPort: 4106, credentialHeaders: { adminToken: 'x-gateway-admin-token' } }),
};

/** Every service, in composition order. */
export const SERVICES: readonly ServiceEntry[] = Object.values(SERVICE_ENTRY);

/** A service's credential header names. */
export const credentialHeaderNames = (service: ServiceEntry): readonly string[] => Object.values(service.credentialHeaders);

/** Every header that is some service's credential. */
export const ALL_CREDENTIAL_HEADERS: readonly string[] = SERVICES.flatMap(credentialHeaderNames);

export const defaultSubgraphUrl = (service: ServiceEntry) => `http://127.0.0.1:${service.subgraphPort}/graphql`;

export const readEmulatorPort = (env: Env, service: ServiceEntry) => readPort(env, service.env.emulatorPort, service.emulatorPort);

export interface SubgraphBasics {
  port: number;
  host: string;
  /** The spec's `{base_url}`. */
  apiUrl: string;
  timeoutMs: number;
  /** Queries run compiled by graphql-jit; off, on graphql-js as Apollo runs them (SUBGRAPH_COMPILED_EXECUTION). */
  compiledExecution: boolean;
  /** Upstream calls one GraphQL request may make, retries included; the gateway may lower it per request (MAX_REQUEST_UPSTREAM_CALLS). */
  maxRequestUpstreamCalls: number;
  /** The upstream's circuit breaker (CIRCUIT_BREAKER_FAILURES, CIRCUIT_BREAKER_COOLDOWN_MS). */
  circuitBreaker: CircuitBreakerSettings;
  /** `/metrics` answers only `Authorization: Bearer <token>` when set (METRICS_TOKEN). */
  metricsToken: string | undefined;
  /** The shapes its `/graphql` takes: four times the gateway's `MAX_QUERY_*`, read from the same settings. */
  operationLimits: OperationLimits;
}

/**
 * What every subgraph reads alike: where it listens, its upstream (the emulator on its default
 * port unless `<NAME>_API_URL` is set), its deadline for one upstream call, its execution and its
 * upstream's circuit breaker.
 */
export function readSubgraphBasics(env: Env, service: ServiceEntry, apiUrl?: string): SubgraphBasics {
  return {
    port: readPort(env, service.env.subgraphPort, service.subgraphPort),
    host: readHost(env),
    apiUrl: apiUrl ?? readUrl(env, service.env.apiUrl) ?? `http://127.0.0.1:${readEmulatorPort(env, service)}`,
    timeoutMs: readInt(env, service.env.timeout, 10_000, { min: 100, max: 120_000 }),
    compiledExecution: readBoolean(env, 'SUBGRAPH_COMPILED_EXECUTION', true),
    maxRequestUpstreamCalls: readInt(env, 'MAX_REQUEST_UPSTREAM_CALLS', 1000, { min: 1, max: 1_000_000 }),
    circuitBreaker: readCircuitBreakerSettings(env),
    metricsToken: readMetricsToken(env),
    operationLimits: withSubgraphHeadroom(readOperationLimits(env)),
  };
}
