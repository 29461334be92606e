import { randomBytes } from 'node:crypto';
import { ConfigError, readInt, readUrl, type Env } from '../../lib/config.ts';
import { SERVICE_ENTRY } from '../../lib/services.ts';
import { readSubgraphConfig, type SubgraphConfig } from '../kit/subgraphConfig.ts';
import { readDownloadLimit } from '../kit/upstream.ts';
import { readPacingSettings, type PacingSettings } from '../kit/pacing.ts';

/** `apiUrl` is the spec's `{base_url}`: every endpoint but product creation. */
export interface MarketplaceConfig extends SubgraphConfig {
  /** The spec's `{api_url}`, the host its product-creation example targets. @default apiUrl */
  productsApiUrl: string;
  /** The marketplace operator's name, the path segment the spec writes `mkt`. @default 'mkt' */
  marketplace: string;
  /** Calls paced under the service's published rates (`UPSTREAM_PACING*`). */
  pacing: PacingSettings;
  /** How long a label PDF link works. @default 300000 (5 minutes) */
  downloadTtlMs: number;
  /** XML invoices larger than this go as a multipart file instead of JSON text. @default 262144 */
  multipartThresholdBytes: number;
  /** The key list cursors are signed with (`CURSOR_SECRET`); random at each start when unset. Replicas must share it. */
  cursorSecret: string;
  /** Label PDF links kept in Redis, so any replica serves any link; in memory when absent. */
  redisUrl?: string;
}

/** The `mkt` path segment: one URL-safe name, shared by the subgraph and the emulator. */
export function readMarketplaceName(env: Env): string {
  const name = env.MARKETPLACE_NAME ?? 'mkt';
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(name)) {
    throw new ConfigError(`MARKETPLACE_NAME must be the marketplace operator's path segment (letters, digits, - and _), such as "mkt"; got "${name}".`);
  }
  return name;
}

/** `CURSOR_SECRET`, or a random key: cursors then last as long as the process. */
export function readCursorSecret(env: Env): string {
  const secret = env.CURSOR_SECRET;
  if (secret === undefined || secret === '') return randomBytes(32).toString('base64url');
  if (secret.length < 32) throw new ConfigError('CURSOR_SECRET must be at least 32 characters (for example `openssl rand -base64 32`); unset it to draw a random one at start.');
  return secret;
}

export function readMarketplaceConfig(env: Env, overrides: Partial<MarketplaceConfig> = {}): MarketplaceConfig {
  const basics = readSubgraphConfig(env, SERVICE_ENTRY.marketplace, overrides.apiUrl);
  const apiUrl = basics.apiUrl;
  return {
    ...basics,
    productsApiUrl: readUrl(env, 'MARKETPLACE_PRODUCTS_API_URL') ?? apiUrl,
    marketplace: readMarketplaceName(env),
    upstreamLimits: { ...basics.upstreamLimits, maxDownloadBytes: readDownloadLimit(env, 'MARKETPLACE_MAX_DOWNLOAD_BYTES') },
    pacing: readPacingSettings(env),
    downloadTtlMs: readInt(env, 'MARKETPLACE_DOWNLOAD_TTL_MS', 5 * 60_000, { min: 1_000, max: 15 * 60_000 }),
    multipartThresholdBytes: readInt(env, 'MARKETPLACE_MULTIPART_THRESHOLD_BYTES', 256 * 1024, { min: 1, max: 64 * 1024 * 1024 }),
    cursorSecret: readCursorSecret(env),
    ...(readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']) ? { redisUrl: env.REDIS_URL } : {}),
    ...overrides,
    apiUrl,
  };
}
