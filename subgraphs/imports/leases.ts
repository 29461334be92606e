import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from '../../lib/logger.ts';
import type { ImportDto } from './client.ts';

/**
 * Who polls each import when several replicas follow it: the holder of a lease in Redis. The
 * holder publishes each change; the others listen, and try for the lease at each of their own
 * ticks, so a holder that stops (or dies, once its lease runs out) is replaced.
 */
export interface PollCoordinator {
  /** Takes the lease on this import, or renews it when this process holds it. True when held. */
  acquire(id: string): Promise<boolean>;
  /** Gives the lease up, if this process holds it. */
  release(id: string): Promise<void>;
  /** Tells every replica of a status change (no credential ever goes to Redis). */
  publish(id: string, status: ImportDto): Promise<void>;
  /** Calls `onStatus` with changes other replicas published; resolves to a function that stops it. */
  listen(id: string, onStatus: (status: ImportDto) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const ACQUIRE = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

export interface RedisLeasesOptions {
  url: string;
  /** Prefix of every key and channel, so several graphs can share one Redis. */
  prefix: string;
  leaseMs: number;
  logger?: Logger;
}

export async function createRedisLeases({ url, prefix, leaseMs, logger }: RedisLeasesOptions): Promise<PollCoordinator> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
  const subscriber = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: null });
  await Promise.all([redis.connect(), subscriber.connect()]);
  // Tells this process's own publications from other replicas'.
  const token = randomBytes(12).toString('hex');
  const handlers = new Map<string, (status: ImportDto) => void>();
  const lease = (id: string) => `${prefix}:lease:${id}`;
  const channel = (id: string) => `${prefix}:status:${id}`;

  subscriber.on('message', (name: string, text: string) => {
    const handler = handlers.get(name);
    if (!handler) return;
    try {
      const message = JSON.parse(text) as { from: string; status: ImportDto };
      // A replica of an older version names the raw status `status`: its message is skipped, never passed on half-read.
      if (message.from !== token && typeof message.status?.statusText === 'string') handler(message.status);
    } catch (error) {
      logger?.warn({ error: (error as Error).message }, 'an import status message could not be read');
    }
  });

  return {
    async acquire(id) {
      return (await redis.eval(ACQUIRE, 1, lease(id), token, String(leaseMs))) === 1;
    },
    async release(id) {
      await redis.eval(RELEASE, 1, lease(id), token);
    },
    async publish(id, status) {
      await redis.publish(channel(id), JSON.stringify({ from: token, status }));
    },
    async listen(id, onStatus) {
      const name = channel(id);
      handlers.set(name, onStatus);
      await subscriber.subscribe(name);
      return async () => {
        if (handlers.get(name) !== onStatus) return;
        handlers.delete(name);
        await subscriber.unsubscribe(name);
      };
    },
    async close() {
      handlers.clear();
      subscriber.disconnect();
      await redis.quit().catch(() => undefined);
    },
  };
}
