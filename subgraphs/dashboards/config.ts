import type { Env } from '../../lib/config.ts';
import { SERVICE_ENTRY, readSubgraphBasics } from '../../lib/services.ts';
import type { CircuitBreakerSettings } from '../../lib/circuitBreaker.ts';
import { readUpstreamLimits, type UpstreamLimits } from '../kit/upstream.ts';

export interface DashboardsConfig {
  port: number;
  host: string;
  /** The spec's `{base_url}`: the endpoints hang straight off it. */
  apiUrl: string;
  timeoutMs: number;
  /** Caps on what one upstream answer may bring (`<NAME>_MAX_RESPONSE_BYTES`). */
  upstreamLimits: UpstreamLimits;
  compiledExecution: boolean;
  /** `/metrics` answers only `Authorization: Bearer <token>` when set (METRICS_TOKEN). */
  metricsToken: string | undefined;
  /** The upstream's circuit breaker (CIRCUIT_BREAKER_FAILURES, CIRCUIT_BREAKER_COOLDOWN_MS). */
  circuitBreaker: CircuitBreakerSettings;
  /** Upstream calls one GraphQL request may make here, retries included (the gateway may lower it per request). */
  maxRequestUpstreamCalls: number;
}

export function readDashboardsConfig(env: Env, overrides: Partial<DashboardsConfig> = {}): DashboardsConfig {
  const basics = readSubgraphBasics(env, SERVICE_ENTRY.dashboards, overrides.apiUrl);
  return { ...basics, upstreamLimits: readUpstreamLimits(env, SERVICE_ENTRY.dashboards), ...overrides, apiUrl: basics.apiUrl };
}
