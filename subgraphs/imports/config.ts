import { ConfigError, readInt, readUrl, type Env } from '../../lib/config.ts';
import { SERVICE_ENTRY } from '../../lib/services.ts';
import { readSubgraphConfig, type SubgraphConfig } from '../kit/subgraphConfig.ts';

/** `apiUrl` is the spec's `{import_url}`; the client adds `/v1`. */
export interface ImportsConfig extends SubgraphConfig {
  /** One poller per import across replicas (a lease in Redis) when set; one per process otherwise. */
  redisUrl?: string;
  /** The first wait between two polls of a job; it doubles while the status holds, up to `pollMaxMs`. */
  pollInitialMs: number;
  pollMaxMs: number;
  /** How long a replica's lease on a job's poller lasts without renewal: a replica that dies is replaced after this. */
  leaseMs: number;
}

export function readImportsConfig(env: Env, overrides: Partial<ImportsConfig> = {}): ImportsConfig {
  const basics = readSubgraphConfig(env, SERVICE_ENTRY.imports, overrides.apiUrl);
  const pollInitialMs = readInt(env, 'IMPORTS_POLL_INITIAL_MS', 1000, { min: 10, max: 600_000 });
  const pollMaxMs = readInt(env, 'IMPORTS_POLL_MAX_MS', 30_000, { min: 10, max: 3_600_000 });
  if (pollMaxMs < pollInitialMs) throw new ConfigError(`IMPORTS_POLL_MAX_MS (${pollMaxMs}) must not be below IMPORTS_POLL_INITIAL_MS (${pollInitialMs}).`);
  return {
    ...basics,
    ...(readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']) ? { redisUrl: env.REDIS_URL } : {}),
    pollInitialMs,
    pollMaxMs,
    leaseMs: readInt(env, 'IMPORTS_LEASE_MS', pollMaxMs + 15_000, { min: 100, max: 3_600_000 }),
    ...overrides,
    apiUrl: basics.apiUrl,
  };
}
