import { Redis } from 'ioredis';

/** How long a request waits on Redis before it goes on without it. */
export const REQUEST_REDIS_TIMEOUT_MS = 500;

/**
 * A Redis connection for state a request reads or writes on its way (rate limits, pacing slots,
 * download links, principals' credentials): commands wait for the connection while it first
 * opens, and no command waits longer than `commandTimeoutMs`. A Redis that accepts the connection
 * and never answers must not hang every request behind it; its callers decide what going on
 * without it means.
 */
export function createRequestRedis(url: string, { commandTimeoutMs = REQUEST_REDIS_TIMEOUT_MS, onError }: { commandTimeoutMs?: number; onError?: (error: Error) => void } = {}): Redis {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: true, commandTimeout: commandTimeoutMs });
  redis.on('error', onError ?? (() => undefined));
  return redis;
}
