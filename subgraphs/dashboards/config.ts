import { readInt, readPort, readUrl, type Env } from '../../lib/config.ts';
import { readUpstreamLimits, type UpstreamLimits } from '../kit/upstream.ts';

export interface DashboardsConfig {
  port: number;
  host: string;
  /** The spec's `{base_url}`: the endpoints hang straight off it. */
  apiUrl: string;
  timeoutMs: number;
  /** Caps on what one upstream answer may bring (`DASHBOARDS_MAX_RESPONSE_BYTES`, `DASHBOARDS_MAX_DOWNLOAD_BYTES`). */
  upstreamLimits: UpstreamLimits;
}

export const DASHBOARDS_SUBGRAPH_PORT = 4003;
export const DASHBOARDS_EMULATOR_PORT = 4103;

export function readDashboardsConfig(env: Env, overrides: Partial<DashboardsConfig> = {}): DashboardsConfig {
  const apiUrl = overrides.apiUrl ?? readUrl(env, 'DASHBOARDS_API_URL') ?? `http://127.0.0.1:${readPort(env, 'DASHBOARDS_EMULATOR_PORT', DASHBOARDS_EMULATOR_PORT)}`;
  return {
    port: readPort(env, 'DASHBOARDS_SUBGRAPH_PORT', DASHBOARDS_SUBGRAPH_PORT),
    host: env.HOST ?? '127.0.0.1',
    timeoutMs: readInt(env, 'DASHBOARDS_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
    upstreamLimits: readUpstreamLimits(env, 'DASHBOARDS'),
    ...overrides,
    apiUrl,
  };
}
