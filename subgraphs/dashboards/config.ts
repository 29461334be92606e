import type { Env } from '../../lib/config.ts';
import { SERVICE_ENTRY } from '../../lib/services.ts';
import { readSubgraphConfig, type SubgraphConfig } from '../kit/subgraphConfig.ts';

/** `apiUrl` is the spec's `{base_url}`: the endpoints hang straight off it. */
export type DashboardsConfig = SubgraphConfig;

export function readDashboardsConfig(env: Env, overrides: Partial<DashboardsConfig> = {}): DashboardsConfig {
  const basics = readSubgraphConfig(env, SERVICE_ENTRY.dashboards, overrides.apiUrl);
  return { ...basics, ...overrides, apiUrl: basics.apiUrl };
}
