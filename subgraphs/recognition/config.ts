import { randomBytes } from 'node:crypto';
import { ConfigError, readInt, readUrl, type Env } from '../../lib/config.ts';
import { SERVICE_ENTRY } from '../../lib/services.ts';
import { readSubgraphConfig, type SubgraphConfig } from '../kit/subgraphConfig.ts';
import { DEFAULT_EVENT_LOG_MAX_BYTES } from '../kit/events/eventLog.ts';

/** `apiUrl` is the spec's `{base_url}`; the client adds `/api/v1`. */
export interface RecognitionConfig extends SubgraphConfig {
  /** Shared event log and dedupe across replicas; in memory when absent. */
  redisUrl?: string;
  /** Events the in-memory log holds for replay (or the Redis stream's length). */
  eventLogSize: number;
  /** Bytes of event JSON the log holds for replay, in memory or on Redis. */
  eventLogMaxBytes: number;
  /** Where the service can reach this subgraph's webhook receiver; `self` means the listening URL. */
  publicUrl?: string;
  /** A token allowed to manage webhooks: with `publicUrl`, the subgraph registers its webhook at start. */
  serviceToken?: string;
  /** The secret in the registered webhook URL. Replicas behind one address must share it. */
  webhookSecret: string;
  webhookMaxBytes: number;
  /** How long the service's answer on a credential is remembered for subscribing (0: never). */
  credentialCheckTtlMs: number;
}

export function readRecognitionConfig(env: Env, overrides: Partial<RecognitionConfig> = {}): RecognitionConfig {
  const basics = readSubgraphConfig(env, SERVICE_ENTRY.recognition, overrides.apiUrl);
  const secret = env.RECOGNITION_WEBHOOK_SECRET;
  if (secret !== undefined && secret !== '' && !/^[A-Za-z0-9_-]{16,}$/.test(secret)) {
    throw new ConfigError('RECOGNITION_WEBHOOK_SECRET must be at least 16 characters of A-Z, a-z, 0-9, _ or -; unset it to draw a random one at start.');
  }
  const publicUrl = env.RECOGNITION_PUBLIC_URL === 'self' ? 'self' : readUrl(env, 'RECOGNITION_PUBLIC_URL');
  return {
    ...basics,
    ...(readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']) ? { redisUrl: env.REDIS_URL } : {}),
    eventLogSize: readInt(env, 'RECOGNITION_EVENT_LOG_SIZE', 10_000, { min: 10, max: 10_000_000 }),
    eventLogMaxBytes: readInt(env, 'RECOGNITION_EVENT_LOG_MAX_BYTES', DEFAULT_EVENT_LOG_MAX_BYTES, { min: 1024 * 1024, max: 64 * 1024 * 1024 * 1024 }),
    ...(publicUrl ? { publicUrl } : {}),
    ...(env.RECOGNITION_SERVICE_TOKEN ? { serviceToken: env.RECOGNITION_SERVICE_TOKEN } : {}),
    webhookSecret: secret || randomBytes(24).toString('base64url'),
    webhookMaxBytes: readInt(env, 'RECOGNITION_WEBHOOK_MAX_BYTES', 64 * 1024, { min: 1024, max: 10 * 1024 * 1024 }),
    credentialCheckTtlMs: readInt(env, 'RECOGNITION_CREDENTIAL_CHECK_TTL_MS', 30_000, { min: 0, max: 600_000 }),
    ...overrides,
    apiUrl: basics.apiUrl,
  };
}
