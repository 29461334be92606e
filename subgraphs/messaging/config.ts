import { randomBytes } from 'node:crypto';
import { ConfigError, readInt, readPort, readUrl, type Env } from '../../lib/config.ts';

export const MESSAGING_SUBGRAPH_PORT = 4004;
export const MESSAGING_EMULATOR_PORT = 4104;

export interface MessagingConfig {
  port: number;
  host: string;
  /** The spec's `{sms_url}`: the endpoints hang straight off it. */
  apiUrl: string;
  timeoutMs: number;
  /** Shared event log and dedupe across replicas; in memory when absent. */
  redisUrl?: string;
  /** Events the in-memory log holds for replay (or the Redis stream's approximate length). */
  eventLogSize: number;
  /** The secret in the callback URLs entered in the store's settings. Replicas behind one address must share it. */
  callbackSecret: string;
  callbackMaxBytes: number;
}

export function readMessagingConfig(env: Env, overrides: Partial<MessagingConfig> = {}): MessagingConfig {
  const apiUrl = overrides.apiUrl ?? readUrl(env, 'MESSAGING_API_URL') ?? `http://127.0.0.1:${readPort(env, 'MESSAGING_EMULATOR_PORT', MESSAGING_EMULATOR_PORT)}`;
  const secret = env.MESSAGING_CALLBACK_SECRET;
  if (secret !== undefined && secret !== '' && !/^[A-Za-z0-9_-]{16,}$/.test(secret)) {
    throw new ConfigError('MESSAGING_CALLBACK_SECRET must be at least 16 characters of A-Z, a-z, 0-9, _ or -; unset it to draw a random one at start.');
  }
  return {
    port: readPort(env, 'MESSAGING_SUBGRAPH_PORT', MESSAGING_SUBGRAPH_PORT),
    host: env.HOST ?? '127.0.0.1',
    timeoutMs: readInt(env, 'MESSAGING_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
    ...(readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']) ? { redisUrl: env.REDIS_URL } : {}),
    eventLogSize: readInt(env, 'MESSAGING_EVENT_LOG_SIZE', 10_000, { min: 10, max: 10_000_000 }),
    callbackSecret: secret || randomBytes(24).toString('base64url'),
    callbackMaxBytes: readInt(env, 'MESSAGING_CALLBACK_MAX_BYTES', 64 * 1024, { min: 1024, max: 10 * 1024 * 1024 }),
    ...overrides,
    apiUrl,
  };
}
