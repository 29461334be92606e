import { Redis } from 'ioredis';
import { ErrorCode } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/logger.ts';
import { createRequestRedis } from '../../../lib/requestRedis.ts';
import { graphError } from '../errors.ts';
import { DEFAULT_EVENT_LOG_MAX_BYTES, type AppendResult, type EventLog, type LoggedEvent, type NewEvent } from './eventLog.ts';

export interface RedisLogOptions {
  url: string;
  /** Prefix of every key, so several graphs can share one Redis. */
  prefix: string;
  /** Stream entries kept. @default 100000 */
  maxLength?: number;
  /** Bytes of event JSON the stream keeps (the oldest entries go first; the newest always stays). @default 64 MiB */
  maxBytes?: number;
  /** How long dedupe keys and remembered entities live. @default 7 days */
  retentionSeconds?: number;
  /**
   * How long one command may wait on Redis (an append, a replay's read, a lookup) before it fails
   * with `UPSTREAM_UNAVAILABLE`; the live reader waits its block and this much more. @default 2000
   */
  commandTimeoutMs?: number;
  /** How long the live reader's `XREAD` blocks, waiting for new entries. @default 5000 */
  readBlockMs?: number;
  logger?: Logger;
}

/**
 * Dedupe, append and trim in one step: a crash between the first two would either lose the event
 * (key set, nothing appended) or let a redelivery append it twice. The stream is trimmed by count
 * and by bytes: KEYS[3] counts the bytes of the events it holds (each entry's one field `e`), and
 * the oldest entries go until both bounds hold, the newest always staying.
 * KEYS: dedupe key, stream, byte counter, entity keys. ARGV: retention seconds, max length, max
 * bytes, event JSON, entity JSONs.
 */
const APPEND = `
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
  local id = redis.call('XADD', KEYS[2], '*', 'e', ARGV[4])
  local bytes = redis.call('INCRBY', KEYS[3], string.len(ARGV[4]))
  local length = redis.call('XLEN', KEYS[2])
  local maxLength = tonumber(ARGV[2])
  local maxBytes = tonumber(ARGV[3])
  while length > 1 and (length > maxLength or bytes > maxBytes) do
    local oldest = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
    redis.call('XDEL', KEYS[2], oldest[1])
    bytes = redis.call('DECRBY', KEYS[3], string.len(oldest[2][2] or ''))
    length = length - 1
  end
  -- Entries written before the counter existed were never counted: it must not go below zero.
  if bytes < 0 then redis.call('SET', KEYS[3], '0') end
  for i = 4, #KEYS do
    redis.call('SET', KEYS[i], ARGV[i + 1], 'EX', ARGV[1])
  end
  return id
end
return false`;

function parseId(id: string): [bigint, bigint] | undefined {
  const match = /^(\d+)-(\d+)$/.exec(id);
  return match ? [BigInt(match[1]!), BigInt(match[2]!)] : undefined;
}

/** Which ioredis reports for a command that got no answer within `commandTimeout`. */
const timedOut = (error: unknown) => error instanceof Error && error.message === 'Command timed out';

/**
 * The log on Redis Streams, shared by every replica: one stream of events, dedupe keys with a
 * retention, and one blocking reader per process that feeds local subscribers.
 *
 * A Redis that refuses connections or never answers fails each command within `commandTimeoutMs`
 * with `UPSTREAM_UNAVAILABLE`: ingestion then answers 5xx (the service delivers again later), and a
 * subscription resuming from a cursor gets a transient error the gateway retries, never a masked
 * internal error that ends the stream.
 */
export async function createRedisLog({ url, prefix, maxLength = 100_000, maxBytes = DEFAULT_EVENT_LOG_MAX_BYTES, retentionSeconds = 7 * 24 * 3600, commandTimeoutMs = 2000, readBlockMs = 5000, logger }: RedisLogOptions): Promise<EventLog> {
  const connectionFailed = (error: Error) => logger?.warn({ error: error.message }, 'event log: Redis connection failed');
  const redis = createRequestRedis(url, { commandTimeoutMs, onError: connectionFailed });
  // A read may block for `readBlockMs` by design, so its bound is longer; it waits for a connection
  // that is reconnecting (maxRetriesPerRequest null) rather than spin while Redis is away.
  const openReader = () => {
    const reader = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: null, commandTimeout: readBlockMs + commandTimeoutMs });
    reader.on('error', connectionFailed);
    return reader;
  };
  let reader = openReader();
  const stream = `${prefix}:events`;
  const listeners = new Set<(event: LoggedEvent) => void>();
  let closed = false;

  const unavailable = (error: unknown) => {
    logger?.warn({ error: (error as Error).message }, 'event log: Redis did not answer');
    return graphError('the event log is kept in Redis, which did not answer; try again shortly', { code: ErrorCode.UpstreamUnavailable });
  };
  /** One command on Redis, its failure typed (the caller's answer to it is transient, not a bug). */
  async function ask<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      throw unavailable(error);
    }
  }

  const decode = ([id, fields]: [string, string[]]): LoggedEvent | undefined => {
    const raw = fields[fields.indexOf('e') + 1];
    if (raw === undefined) return undefined;
    const event = JSON.parse(raw) as Omit<LoggedEvent, 'position'>;
    return { ...event, position: id };
  };

  async function head(): Promise<string | undefined> {
    const [last] = await ask(() => redis.xrevrange(stream, '+', '-', 'COUNT', 1));
    return last?.[0];
  }

  // The reader starts at the head now, so a subscriber attached from here on misses nothing.
  let lastRead: string;
  try {
    lastRead = (await head()) ?? '0-0';
  } catch (error) {
    redis.disconnect();
    reader.disconnect();
    throw error;
  }
  void (async () => {
    while (!closed) {
      try {
        const batches = (await reader.xread('COUNT', 1000, 'BLOCK', readBlockMs, 'STREAMS', stream, lastRead)) as [string, [string, string[]][]][] | null;
        for (const [, entries] of batches ?? []) {
          for (const entry of entries) {
            lastRead = entry[0];
            const event = decode(entry);
            if (event) for (const listener of listeners) listener(event);
          }
        }
      } catch (error) {
        if (closed) break;
        logger?.warn({ error: (error as Error).message }, 'event log reader failed; retrying');
        if (timedOut(error)) {
          // A connection that took a read (or its handshake) and never answered may never answer
          // again (a peer gone without a reset), and the next read would queue behind it: read on
          // a new one.
          reader.disconnect();
          reader = openReader();
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  })();

  return {
    async append(event: NewEvent): Promise<AppendResult> {
      const entities = event.entities ?? [];
      const keys = [`${prefix}:dedupe:${event.dedupeKey}`, stream, `${stream}:bytes`, ...entities.map((entity) => `${prefix}:entity:${entity.kind}:${entity.id}`)];
      const body = JSON.stringify({ dedupeKey: event.dedupeKey, type: event.type, occurredAt: event.occurredAt, payload: event.payload, ...(event.trace ? { trace: event.trace } : {}) });
      const args = [String(retentionSeconds), String(maxLength), String(maxBytes), body, ...entities.map((entity) => JSON.stringify(entity.value))];
      // Timed out, the script may still run once Redis answers: the service's redelivery is then a duplicate.
      const id = (await ask(() => redis.eval(APPEND, keys.length, ...keys, ...args))) as string | null;
      return id ? { appended: true, position: id } : { appended: false };
    },
    async readAfter(position, limit) {
      const start = position !== undefined && parseId(position) ? `(${position}` : '-';
      const entries = (await ask(() => redis.xrange(stream, start, '+', 'COUNT', limit))) as [string, string[]][];
      return entries.map(decode).filter((event): event is LoggedEvent => event !== undefined);
    },
    head,
    onAppend(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listeners: () => listeners.size,
    recognises(position) {
      return parseId(position) !== undefined;
    },
    isAfter(a, b) {
      const left = parseId(a);
      const right = parseId(b);
      if (!left) return false;
      if (!right) return true;
      return left[0] > right[0] || (left[0] === right[0] && left[1] > right[1]);
    },
    async findEntity(kind, id) {
      const raw = await ask(() => redis.get(`${prefix}:entity:${kind}:${id}`));
      return raw === null ? undefined : (JSON.parse(raw) as unknown);
    },
    async close() {
      closed = true;
      listeners.clear();
      // The read in flight ends within its bound and the loop with it; nothing waits for that: a
      // read queued while Redis is away is not released by a disconnect, only by its timeout.
      reader.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
