import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { z } from 'zod';
import type { Logger } from '../lib/logger.ts';
import { createRequestRedis, REQUEST_REDIS_TIMEOUT_MS } from '../lib/requestRedis.ts';

/** Where the gateways of one REDIS_URL tell each other which credentials wrote to which subgraph. */
export const DROPS_CHANNEL = 'graph:micro-cache:drops';
/** Credentials (per subgraph) one message names; past it, the message says "everything" instead. */
export const MAX_DROPS_PER_MESSAGE = 256;
/** Longer than any message a gateway sends (256 pairs of a subgraph's name and a digest): the rest is not read. */
const MAX_MESSAGE_CHARS = 64 * 1024;
/** How often the subscription is checked: a Redis that stops answering closes no socket. */
const HEARTBEAT_MS = 1000;
/** Ignored messages are logged at most this often (never their text, which could hold anything). */
const IGNORED_LOG_EVERY_MS = 60_000;

/** A credential's write to a subgraph: the credential as the micro-cache's digest, never in the clear. */
export interface Drop {
  subgraph: string;
  digest: string;
}
/** What another gateway wrote, or `'all'`: anything kept may have missed a write (the channel went down or came back, or a gateway had too many to name). */
export type Drops = readonly Drop[] | 'all';

export interface DropChannel {
  /**
   * Subscribed and answering. While not, a write elsewhere may go untold: the micro-cache answers
   * from nothing it kept and keeps nothing.
   */
  readonly live: boolean;
  /**
   * Tells the other gateways that `digest` wrote to `subgraph`. Resolves once Redis took the
   * message (or failed to, within its command timeout), at once while the channel is down: the
   * drop is then sent when it is back. Redis has then queued it for every subscriber, ahead of
   * anything they ask afterwards (`caughtUp`).
   */
  publish(subgraph: string, digest: string): Promise<void>;
  /**
   * Resolves once every message Redis took before this call has been read here, so that a read
   * sent after another gateway's write was answered is not answered from what that write made
   * stale. At once while the channel is not live (nothing kept is answered then).
   */
  caughtUp(): Promise<void>;
  /** The one listener of what other gateways wrote, and of `'all'` when the channel goes down or comes back. */
  listen(listener: (drops: Drops) => void): void;
  close(): Promise<void>;
}

/** The micro-cache's credential digest: SHA-256, base64url. */
const DIGEST = /^[A-Za-z0-9_-]{43}$/;
const sender = { v: z.literal(1), from: z.string().max(64), n: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) };
const messageShape = z.union([
  z.object({
    ...sender,
    drops: z.array(z.tuple([z.string().min(1).max(100), z.string().regex(DIGEST)])).min(1).max(MAX_DROPS_PER_MESSAGE),
  }),
  z.object({ ...sender, all: z.literal(true) }),
]);

/** A message on the channel as this gateway reads it; undefined for anything a gateway would not have sent. */
export function readDropsMessage(text: string): { from: string; n: number; drops: Drops } | undefined {
  if (text.length > MAX_MESSAGE_CHARS) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = messageShape.safeParse(value);
  if (!parsed.success) return undefined;
  const { from, n } = parsed.data;
  if ('all' in parsed.data) return { from, n, drops: 'all' };
  return { from, n, drops: parsed.data.drops.map(([subgraph, digest]) => ({ subgraph, digest })) };
}

/** A promise and what settles it (Node 20 has no `Promise.withResolvers`). */
function settlement(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

/**
 * Drops gathered into messages: at most one message in flight; what is published meanwhile goes in
 * the next one, each credential once, so mutations that end while a message is on its way cost one
 * more message, not one each. Past `maxDrops` distinct credentials the next message says
 * "everything". Each `publish` resolves once the message holding its drop was sent (or failed):
 * the mutation's answer waits for at most the message in flight and its own. A failed message's
 * drops go in the next one, sent on the next `publish` or `flush`, never in a loop.
 */
export function createDropBatches({ send, ready, maxDrops = MAX_DROPS_PER_MESSAGE }: { send: (drops: Drops) => Promise<unknown>; ready: () => boolean; maxDrops?: number }) {
  let pending = new Set<string>();
  let everything = false;
  let sending = false;
  let next = settlement();
  const add = (key: string) => {
    if (everything) return;
    if (pending.size < maxDrops) pending.add(key);
    else {
      everything = true;
      pending.clear();
    }
  };
  const flush = () => {
    if (sending || !ready() || (!everything && pending.size === 0)) return;
    const keys = pending;
    const all = everything;
    const done = next;
    pending = new Set();
    everything = false;
    next = settlement();
    sending = true;
    const drops: Drops = all
      ? 'all'
      : [...keys].map((key) => {
          const separator = key.indexOf('\u0000');
          return { subgraph: key.slice(0, separator), digest: key.slice(separator + 1) };
        });
    send(drops).then(
      () => {
        sending = false;
        done.resolve();
        flush();
      },
      () => {
        sending = false;
        if (all) everything = true;
        else for (const key of keys) add(key);
        done.resolve();
      },
    );
  };
  return {
    publish(subgraph: string, digest: string): Promise<void> {
      add(`${subgraph}\u0000${digest}`);
      if (!ready()) return Promise.resolve();
      const sent = next.promise;
      flush();
      return sent;
    },
    flush,
    /** Drops not yet sent (`'all'` past the bound). */
    get pending(): number | 'all' {
      return everything ? 'all' : pending.size;
    },
  };
}

/**
 * The micro-cache's channel between gateways on one Redis (docs/REPLICAS.md): a mutation's drop is
 * published before its answer goes back, and every other gateway drops what it kept for that
 * credential of that subgraph as the message arrives. The subscription is checked every second;
 * while it is not up and answering, the channel is not `live`.
 */
export function createDropChannel(url: string, logger: Logger, { heartbeatMs = HEARTBEAT_MS }: { heartbeatMs?: number } = {}): DropChannel {
  // Its own messages come back to a gateway: it has already dropped what they name.
  const from = randomBytes(12).toString('base64url');
  const publisher = createRequestRedis(url);
  // A subscription has no command to time out on: its own connection, resubscribed by hand on
  // every `ready`, so `live` is true only once Redis has confirmed the subscription.
  const subscriber = new Redis(url, { autoResubscribe: false, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: REQUEST_REDIS_TIMEOUT_MS, retryStrategy: (times) => Math.min(100 * times, 2000) });
  subscriber.on('error', () => undefined);
  let live = false;
  let closed = false;
  let listener: (drops: Drops) => void = () => undefined;
  let ignored = 0;
  let ignoredLoggedAt = -Infinity;
  let sent = 0;
  const send = async (drops: Drops) => {
    const n = (sent += 1);
    const text = JSON.stringify(drops === 'all' ? { v: 1, from, n, all: true } : { v: 1, from, n, drops: drops.map(({ subgraph, digest }) => [subgraph, digest]) });
    await publisher.publish(DROPS_CHANNEL, text);
  };
  const batches = createDropBatches({ send, ready: () => live });

  const tell = (drops: Drops) => {
    try {
      listener(drops);
    } catch (error) {
      logger.error({ err: error instanceof Error ? error.message : String(error) }, 'the micro-cache failed to take a drop');
    }
  };
  const setLive = (value: boolean) => {
    if (live === value || closed) return;
    live = value;
    // Either way, what is kept may have missed a write: forget it, and keep nothing of reads already on their way.
    tell('all');
    if (value) {
      logger.info('micro-cache channel up: answering from what is kept again');
      batches.flush();
    } else {
      logger.warn('micro-cache channel down: answering from nothing kept until Redis answers again');
    }
  };
  const restart = () => {
    setLive(false);
    if (!closed) subscriber.disconnect(true);
  };

  subscriber.on('ready', () => {
    subscriber.subscribe(DROPS_CHANNEL).then(() => {
      if (subscriber.status === 'ready') setLive(true);
    }, restart);
  });
  subscriber.on('close', () => setLive(false));
  subscriber.on('message', (channel: string, text: string) => {
    if (channel !== DROPS_CHANNEL) return;
    const message = readDropsMessage(text);
    if (!message) {
      ignored += 1;
      const now = Date.now();
      if (now - ignoredLoggedAt >= IGNORED_LOG_EVERY_MS) {
        ignoredLoggedAt = now;
        logger.warn({ ignored, chars: text.length }, `ignored messages on ${DROPS_CHANNEL} that no gateway sends`);
      }
      return;
    }
    if (message.from !== from) tell(message.drops);
  });
  // Redis answers a subscriber's PING after every message it queued for it before: one PING, sent
  // after every read that waits for it arrived, tells them all that they have seen every write
  // answered before they were sent (docs/REPLICAS.md).
  let nextPing: Promise<void> | undefined;
  const caughtUp = () => {
    if (!live) return Promise.resolve();
    nextPing ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        nextPing = undefined;
        subscriber.ping().then(
          () => resolve(),
          () => {
            restart();
            resolve();
          },
        );
      }),
    );
    return nextPing;
  };
  const heartbeat = setInterval(() => {
    if (!live) return;
    subscriber.ping().then(() => batches.flush(), restart);
  }, heartbeatMs);

  return {
    get live() {
      return live;
    },
    publish: (subgraph, digest) => batches.publish(subgraph, digest),
    caughtUp,
    listen(next) {
      listener = next;
    },
    async close() {
      closed = true;
      live = false;
      clearInterval(heartbeat);
      subscriber.disconnect();
      publisher.disconnect();
    },
  };
}
