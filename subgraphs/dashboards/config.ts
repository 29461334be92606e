import type { Env } from '../../lib/config.ts';
import { SERVICE_ENTRY, readSubgraphBasics } from '../../lib/services.ts';

export interface DashboardsConfig {
  port: number;
  host: string;
  /** The spec's `{base_url}`: the endpoints hang straight off it. */
  apiUrl: string;
  timeoutMs: number;
  compiledExecution: boolean;
  /** Upstream calls one GraphQL request may make here, retries included (the gateway may lower it per request). */
  maxRequestUpstreamCalls: number;
}

export function readDashboardsConfig(env: Env, overrides: Partial<DashboardsConfig> = {}): DashboardsConfig {
  const basics = readSubgraphBasics(env, SERVICE_ENTRY.dashboards, overrides.apiUrl);
  return { ...basics, ...overrides, apiUrl: basics.apiUrl };
}
