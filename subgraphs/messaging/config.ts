import { randomBytes } from 'node:crypto';
import { ConfigError, readInt, readUrl, type Env } from '../../lib/config.ts';
import { SERVICE_ENTRY } from '../../lib/services.ts';
import { readSubgraphConfig, type SubgraphConfig } from '../kit/subgraphConfig.ts';
import { readPacingSettings, type PacingSettings } from '../kit/pacing.ts';

/** `apiUrl` is the spec's `{sms_url}`: the endpoints hang straight off it. */
export interface MessagingConfig extends SubgraphConfig {
  /** Shared event log and dedupe across replicas; in memory when absent. */
  redisUrl?: string;
  /** Events the in-memory log holds for replay (or the Redis stream's approximate length). */
  eventLogSize: number;
  /** The secret in the callback URLs entered in the store's settings. Replicas behind one address must share it. */
  callbackSecret: string;
  callbackMaxBytes: number;
  /** Calls paced under the service's published rate (`UPSTREAM_PACING*`). */
  pacing: PacingSettings;
  /** How often an open subscription's credential is checked again upstream: once per this many ms per credential, however many subscriptions hold it. */
  credentialCheckTtlMs: number;
}

export function readMessagingConfig(env: Env, overrides: Partial<MessagingConfig> = {}): MessagingConfig {
  const basics = readSubgraphConfig(env, SERVICE_ENTRY.messaging, overrides.apiUrl);
  const secret = env.MESSAGING_CALLBACK_SECRET;
  if (secret !== undefined && secret !== '' && !/^[A-Za-z0-9_-]{16,}$/.test(secret)) {
    throw new ConfigError('MESSAGING_CALLBACK_SECRET must be at least 16 characters of A-Z, a-z, 0-9, _ or -; unset it to draw a random one at start.');
  }
  return {
    ...basics,
    ...(readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']) ? { redisUrl: env.REDIS_URL } : {}),
    eventLogSize: readInt(env, 'MESSAGING_EVENT_LOG_SIZE', 10_000, { min: 10, max: 10_000_000 }),
    callbackSecret: secret || randomBytes(24).toString('base64url'),
    callbackMaxBytes: readInt(env, 'MESSAGING_CALLBACK_MAX_BYTES', 64 * 1024, { min: 1024, max: 10 * 1024 * 1024 }),
    pacing: readPacingSettings(env),
    credentialCheckTtlMs: readInt(env, 'MESSAGING_CREDENTIAL_CHECK_TTL_MS', 30_000, { min: 100, max: 600_000 }),
    ...overrides,
    apiUrl: basics.apiUrl,
  };
}
