import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { createRequestRedis } from '../../lib/requestRedis.ts';
import { ErrorCode } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { newDownloadId, type DownloadStore } from './downloads.ts';
import { graphError } from './errors.ts';

export interface RedisDownloadStoreOptions<T> {
  url: string;
  /** Prefix of every key, so several graphs can share one Redis. */
  prefix: string;
  /** How long a link works; Redis keeps the entry one more lifetime, to answer `expired`. */
  ttlMs: number;
  /** Reads a stored value back, or undefined when it is not what this version stores. */
  read(value: unknown): T | undefined;
  /** The service named in errors. */
  service: string;
  /** Largest value (its JSON) a link may stand for: a bigger one is refused, never stored. @default 16384 */
  maxValueBytes?: number;
  /** @default Date.now */
  now?: () => number;
  /** How long one Redis command may take before the link fails instead of hanging. @default 2000 */
  commandTimeoutMs?: number;
  logger?: Logger;
}

const derive = (id: string, purpose: string) => Buffer.from(hkdfSync('sha256', id, '', `graph download link ${purpose}`, 32));

/**
 * Download links in Redis, so that any replica serves a link another made. The value stands for
 * a caller's credential, so Redis never holds it readable, nor the id that unlocks it: the key is
 * derived from the id, and the value is sealed (AES-256-GCM) under another key derived from the
 * id. Whoever reads Redis learns neither the link nor the credential; whoever holds the link gets
 * exactly what the link gives. No secret needs sharing between replicas for this.
 */
export function createRedisDownloadStore<T>({ url, prefix, ttlMs, read, service, maxValueBytes = 16 * 1024, now = Date.now, commandTimeoutMs = 2000, logger }: RedisDownloadStoreOptions<T>): DownloadStore<T> {
  const redis = createRequestRedis(url, { commandTimeoutMs, onError: (error) => logger?.warn({ error: error.message }, 'download link store: Redis connection failed') });
  const keyOf = (id: string) => `${prefix}:download:${derive(id, 'lookup').toString('base64url')}`;
  const unavailable = () => graphError(`${service}: download links are kept in Redis, which did not answer; try again shortly`, { code: ErrorCode.UpstreamUnavailable, service });

  function seal(id: string, plain: Buffer): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', derive(id, 'seal'), iv);
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
  }

  function open(id: string, stored: Buffer): unknown {
    const decipher = createDecipheriv('aes-256-gcm', derive(id, 'seal'), stored.subarray(0, 12));
    decipher.setAuthTag(stored.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(stored.subarray(28)), decipher.final()]).toString('utf8')) as unknown;
  }

  return {
    async issue(value) {
      const id = newDownloadId();
      const expiresAt = now() + ttlMs;
      const plain = Buffer.from(JSON.stringify({ e: expiresAt, v: value }));
      if (plain.length > maxValueBytes) {
        throw graphError(`${service}: the credential headers are too long to stand behind a download link (at most ${maxValueBytes} bytes)`, { code: ErrorCode.BadUserInput, service });
      }
      try {
        await redis.set(keyOf(id), seal(id, plain), 'PX', 2 * ttlMs);
      } catch (error) {
        logger?.warn({ error: (error as Error).message }, 'download link not stored');
        throw unavailable();
      }
      return { id, expiresAt };
    },
    async find(id) {
      let stored: Buffer | null;
      try {
        stored = await redis.getBuffer(keyOf(id));
      } catch (error) {
        logger?.warn({ error: (error as Error).message }, 'download link not read');
        throw unavailable();
      }
      if (!stored || stored.length < 28 || stored.length > maxValueBytes + 64) return undefined;
      let entry: { e?: unknown; v?: unknown };
      try {
        entry = open(id, stored) as { e?: unknown; v?: unknown };
      } catch {
        // Not sealed under this id: nothing this graph wrote for this link.
        return undefined;
      }
      const value = typeof entry.e === 'number' ? read(entry.v) : undefined;
      if (value === undefined || typeof entry.e !== 'number') return undefined;
      // The store's clock decides, as in memory: Redis's own expiry only frees the space.
      if (now() > entry.e + ttlMs) return undefined;
      return now() > entry.e ? 'expired' : value;
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
