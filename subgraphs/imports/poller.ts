import type { GraphQLError } from 'graphql';
import type { Logger } from '../../lib/logger.ts';
import type { DeadlineClock } from '../../lib/deadlines.ts';
import { ErrorCode, graphError } from '../kit/errors.ts';
import { isFinal, type ImportDto } from './client.ts';
import type { PollCoordinator } from './leases.ts';

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/**
 * The wait before the next poll: back to the start after a change, doubled while nothing changes,
 * never above the maximum; and never shorter than a `Retry-After` the service asked for.
 */
export function nextDelay(previousMs: number | undefined, { initialMs, maxMs }: Backoff, { changed = false, retryAfterMs }: { changed?: boolean; retryAfterMs?: number } = {}): number {
  const base = changed || previousMs === undefined ? initialMs : Math.min(maxMs, previousMs * 2);
  return retryAfterMs !== undefined ? Math.max(base, retryAfterMs) : base;
}

export interface StatusPollerOptions {
  /** Reads a job with one caller's key: null when that key sees no such job. */
  fetchStatus(id: string, credential: string): Promise<ImportDto | null>;
  /** Timers of the poller (tests pass a manual clock). */
  clock: DeadlineClock;
  backoff: Backoff;
  /** With several replicas: who polls each job, and how the others hear of its changes. Absent: this process polls. */
  coordinator?: PollCoordinator;
  logger?: Logger;
}

export interface PollerStats {
  /** Imports followed in this process (one watch each, however many subscribers). */
  watches: number;
  subscribers: number;
  /** Polls this process made since start. */
  polls: number;
  /** Timer ticks handled since start: a poll, or a try for the lease that another replica holds. */
  ticks: number;
}

export interface StatusPoller {
  /**
   * The job's statuses for one subscriber: `current` (what the subscriber's own key just read) at
   * once, then each change, ending after a final status. A failure of the subscriber's key
   * arrives as an `Error` item, after which the stream ends.
   */
  follow(id: string, credential: string, current: ImportDto): AsyncIterableIterator<ImportDto | GraphQLError>;
  stats(): PollerStats;
  close(): Promise<void>;
}

interface Subscriber {
  credential: string;
  push(item: ImportDto | GraphQLError): void;
  end(): void;
}

interface Watch {
  id: string;
  subscribers: Set<Subscriber>;
  last: ImportDto;
  delayMs: number | undefined;
  /** Cancels the armed timer. */
  cancelTimer: (() => void) | undefined;
  polling: boolean;
  holding: boolean;
  /** Polls made: the next is made with the key after the last one's, in turn. */
  turn: number;
  stopListening?: Promise<() => Promise<void>>;
}

const sameStatus = (a: ImportDto | undefined, b: ImportDto) => a !== undefined && a.statusText === b.statusText && (a.message ?? '') === (b.message ?? '');
/** Failures that say this key may not see the job: its subscribers are told and dropped, the others go on. */
const KEY_REFUSED = new Set<string>([ErrorCode.Unauthenticated, ErrorCode.Forbidden, ErrorCode.NotFound]);

function subscriberQueue(credential: string, first: ImportDto, onEnd: () => void): { subscriber: Subscriber; iterator: AsyncIterableIterator<ImportDto | GraphQLError> } {
  const queue: (ImportDto | GraphQLError)[] = [first];
  let last: ImportDto = first;
  let ended = false;
  let waiting: ((result: IteratorResult<ImportDto | GraphQLError>) => void) | undefined;
  const finish = () => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  const subscriber: Subscriber = {
    credential,
    push(item) {
      if (ended) return;
      // Each subscriber sees a status once, whichever read brought it.
      if (!(item instanceof Error)) {
        if (sameStatus(last, item)) return;
        last = item;
      }
      if (waiting) {
        const resolve = waiting;
        waiting = undefined;
        resolve({ value: item, done: false });
      } else queue.push(item);
    },
    end() {
      if (ended) return;
      finish();
      if (waiting && queue.length === 0) {
        const resolve = waiting;
        waiting = undefined;
        resolve({ value: undefined, done: true });
      }
    },
  };
  const iterator: AsyncIterableIterator<ImportDto | GraphQLError> = {
    next() {
      if (queue.length) return Promise.resolve({ value: queue.shift()!, done: false });
      if (ended) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => (waiting = resolve));
    },
    return() {
      queue.length = 0;
      finish();
      waiting?.({ value: undefined, done: true });
      waiting = undefined;
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return { subscriber, iterator };
}

/**
 * Turns a service without webhooks into status events: one poller per import however many
 * subscribers watch it (and, with a coordinator, however many replicas), with backoff from
 * `initialMs` to `maxMs`, honouring `Retry-After`. Polling stops when the last subscriber leaves
 * or the status is final. Polls use the keys of the subscribers still watching, each in turn; every
 * subscriber's own key was checked against the job when it subscribed, and one the service refuses
 * later ends only its own subscribers.
 */
export function createStatusPoller({ fetchStatus, clock, backoff, coordinator, logger }: StatusPollerOptions): StatusPoller {
  const watches = new Map<string, Watch>();
  let polls = 0;
  let ticks = 0;
  let closed = false;

  function schedule(watch: Watch): void {
    if (closed || watches.get(watch.id) !== watch) return;
    watch.delayMs ??= backoff.initialMs;
    watch.cancelTimer = clock.after(watch.delayMs, () => void tick(watch));
  }

  function dispose(watch: Watch): void {
    if (watches.get(watch.id) !== watch) return;
    watches.delete(watch.id);
    watch.cancelTimer?.();
    for (const subscriber of [...watch.subscribers]) subscriber.end();
    watch.subscribers.clear();
    if (coordinator) {
      void watch.stopListening?.then((stop) => stop()).catch(() => undefined);
      if (watch.holding) void coordinator.release(watch.id).catch((error: unknown) => logger?.warn({ importId: watch.id, error: (error as Error).message }, 'could not release an import poller lease'));
    }
  }

  /** A status from a poll here or from another replica's: passed on if it changed, and the end of the watch if final. */
  function apply(watch: Watch, dto: ImportDto): boolean {
    const changed = !sameStatus(watch.last, dto);
    watch.last = dto;
    if (changed) for (const subscriber of watch.subscribers) subscriber.push(dto);
    if (isFinal(dto)) dispose(watch);
    return changed;
  }

  function refuse(watch: Watch, credential: string, error: GraphQLError): void {
    for (const subscriber of [...watch.subscribers]) {
      if (subscriber.credential !== credential) continue;
      subscriber.push(error);
      subscriber.end();
    }
  }

  async function tick(watch: Watch): Promise<void> {
    watch.cancelTimer = undefined;
    if (watches.get(watch.id) !== watch || watch.polling) return;
    watch.polling = true;
    try {
      if (coordinator) {
        watch.holding = await coordinator.acquire(watch.id);
        if (!watch.holding) {
          // Another replica polls; this one tries again later, in case that one has gone.
          watch.delayMs = nextDelay(watch.delayMs, backoff);
          return;
        }
      }
      // Each key watching in turn: one the service stops accepting (revoked) is found within a round, not never.
      const keys = [...new Set(Array.from(watch.subscribers, (subscriber) => subscriber.credential))];
      const credential = keys[watch.turn % Math.max(keys.length, 1)];
      if (credential === undefined) return;
      watch.turn += 1;
      polls += 1;
      try {
        const dto = await fetchStatus(watch.id, credential);
        if (watches.get(watch.id) !== watch) return;
        if (!dto) {
          refuse(watch, credential, graphError(`imports: no import ${watch.id} for this API key`, { code: ErrorCode.NotFound, service: 'imports' }));
          return;
        }
        const changed = apply(watch, dto);
        if (changed && coordinator) await coordinator.publish(watch.id, dto);
        watch.delayMs = nextDelay(watch.delayMs, backoff, { changed });
      } catch (caught) {
        const error = caught as GraphQLError;
        const code = String(error.extensions?.code ?? '');
        if (KEY_REFUSED.has(code)) {
          refuse(watch, credential, error);
          return;
        }
        const retryAfter = error.extensions?.retryAfterSeconds;
        watch.delayMs = nextDelay(watch.delayMs, backoff, typeof retryAfter === 'number' ? { retryAfterMs: retryAfter * 1000 } : {});
        logger?.warn({ importId: watch.id, code: code || 'unknown', retryInMs: watch.delayMs }, 'polling an import failed; trying again');
      }
    } catch (error) {
      // The coordinator (Redis) failed: keep the subscribers, try again later.
      watch.delayMs = nextDelay(watch.delayMs, backoff);
      logger?.warn({ importId: watch.id, error: (error as Error).message }, 'could not coordinate an import poller; trying again');
    } finally {
      ticks += 1;
      watch.polling = false;
      if (watch.subscribers.size === 0) dispose(watch);
      else schedule(watch);
    }
  }

  function open(id: string, current: ImportDto): Watch {
    const watch: Watch = { id, subscribers: new Set(), last: current, delayMs: undefined, cancelTimer: undefined, polling: false, holding: false, turn: 0 };
    watches.set(id, watch);
    if (coordinator) {
      watch.stopListening = coordinator.listen(id, (dto) => {
        if (watches.get(id) !== watch) return;
        // A change seen by the replica that polls: this one's next try starts over from the shortest wait.
        if (apply(watch, dto)) watch.delayMs = nextDelay(undefined, backoff);
      });
      watch.stopListening.catch((error: unknown) => logger?.warn({ importId: id, error: (error as Error).message }, 'could not listen for import status changes'));
    }
    schedule(watch);
    return watch;
  }

  return {
    follow(id, credential, current) {
      const { subscriber, iterator } = subscriberQueue(credential, current, () => {
        const watch = watches.get(id);
        if (!watch || !watch.subscribers.delete(subscriber)) return;
        // The last subscriber left: stop polling now, unless a poll is under way (it stops after it).
        if (watch.subscribers.size === 0 && !watch.polling) dispose(watch);
      });
      if (isFinal(current) || closed) {
        subscriber.end();
        return iterator;
      }
      const watch = watches.get(id) ?? open(id, current);
      // The subscriber's own read may differ from what the watch last saw; the next poll settles it for everyone.
      watch.subscribers.add(subscriber);
      return iterator;
    },
    stats() {
      let subscribers = 0;
      for (const watch of watches.values()) subscribers += watch.subscribers.size;
      return { watches: watches.size, subscribers, polls, ticks };
    },
    async close() {
      closed = true;
      for (const watch of [...watches.values()]) dispose(watch);
      await coordinator?.close();
    },
  };
}
