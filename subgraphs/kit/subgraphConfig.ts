import type { Env } from '../../lib/config.ts';
import { readSubgraphBasics, type ServiceEntry, type SubgraphBasics } from '../../lib/services.ts';
import { readUpstreamLimits, type UpstreamLimits } from './upstream.ts';

/** What every subgraph's configuration holds, whatever its service adds. */
export interface SubgraphConfig extends SubgraphBasics {
  /** Caps on what one upstream answer may bring (`<NAME>_MAX_RESPONSE_BYTES`) and on one caller's connections (`<NAME>_CONNECTIONS_PER_CALLER`, `<NAME>_MAX_WAITING_PER_CALLER`). */
  upstreamLimits: UpstreamLimits;
}

/**
 * Read alike for every service, so that no service can miss a setting the README promises for all
 * (`MAX_REQUEST_UPSTREAM_CALLS`, `<NAME>_MAX_RESPONSE_BYTES`, the connection gate's share and queue).
 */
export function readSubgraphConfig(env: Env, service: ServiceEntry, apiUrl?: string): SubgraphConfig {
  return { ...readSubgraphBasics(env, service, apiUrl), upstreamLimits: readUpstreamLimits(env, service) };
}
