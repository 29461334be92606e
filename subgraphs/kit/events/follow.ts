import { badUserInput } from '../errors.ts';
import type { EventLog, LoggedEvent } from './eventLog.ts';

/** Events read from the log at a time while replaying. */
export const REPLAY_BATCH = 500;

/** The error of a replay read that failed, by the stand-in event the follower yielded for it. */
const failedReads = new WeakMap<LoggedEvent, Error>();

/**
 * The error a follower yielded in place of the events it could not read (or as its last result,
 * ended by its `watch`: a credential refused), for the subscription's
 * `resolve` to raise (`resolveEvent`). Thrown from the iterator instead, it would end the stream
 * as a failure (graphql-ws's `error`), which the gateway passes on and never retries; raised while
 * resolving the event, it is a result with that error, and on a transient one (the log's
 * `UPSTREAM_UNAVAILABLE`) the gateway resubscribes from its last cursor.
 */
export function failedReadOf(event: LoggedEvent): Error | undefined {
  return failedReads.get(event);
}

function standInFor(error: unknown, position: string | undefined): LoggedEvent {
  const event: LoggedEvent = { dedupeKey: '', type: '', occurredAt: '', payload: null, position: position ?? '' };
  failedReads.set(event, error instanceof Error ? error : new Error(String(error)));
  return event;
}

export interface FollowOptions {
  /**
   * Called as the stream starts, with what ends it early: `end(error)` makes `error` its last
   * result (`failedReadOf`, raised by `resolveEvent`), and it completes. What it returns is called
   * once the stream stops, however it stops. The subscriptions end this way when the caller's
   * credential is refused while they stream (`CredentialChecks.watch`).
   */
  watch?: (end: (error: Error) => void) => () => void;
}

/**
 * Follows the log from a position: first what it still holds after `after` (when given), then
 * live events, with no gap and no repeat between the two. Without `after`, only events appended
 * from now on.
 *
 * Event cursors are not signed, so `after` is checked here: a position of no form this log writes,
 * or one past its newest event, is BAD_USER_INPUT naming `after`. Followed, a position ahead of the
 * log would skip every live event until the log caught up with it: a stream that stays silent.
 *
 * The log failing while `after` is checked fails the subscription with its error; failing while
 * replaying, it ends the stream with one stand-in event carrying the error (`failedReadOf`).
 */
export async function followLog(log: EventLog, after: string | undefined, accept: (event: LoggedEvent) => boolean = () => true, { watch }: FollowOptions = {}): Promise<AsyncIterableIterator<LoggedEvent>> {
  if (after !== undefined) {
    if (!log.recognises(after)) throw badUserInput('after', 'is not a cursor of this event stream');
    const head = await log.head();
    if (head !== undefined && log.isAfter(after, head)) throw badUserInput('after', 'is ahead of the newest event: resume from the cursor of an event received');
  }
  const live: LoggedEvent[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  // Set by `watch`: what ends the stream, as its last result, before any event still queued.
  let ended: Error | undefined;
  const detach = log.onAppend((event) => {
    live.push(event);
    wake?.();
  });
  const unwatch = watch?.((error) => {
    if (done || ended) return;
    ended = error;
    wake?.();
  });

  async function* generate(): AsyncGenerator<LoggedEvent> {
    let last = after;
    try {
      if (after !== undefined) {
        for (;;) {
          let batch: LoggedEvent[];
          try {
            batch = await log.readAfter(last, REPLAY_BATCH);
          } catch (error) {
            // The stream ends on this one result (failedReadOf): what comes after `last` is read again on resuming.
            yield standInFor(error, last);
            return;
          }
          for (const event of batch) {
            if (ended) break;
            last = event.position;
            if (accept(event)) yield event;
          }
          if (ended || batch.length < REPLAY_BATCH) break;
        }
      }
      while (!done) {
        if (ended) {
          yield standInFor(ended, last);
          return;
        }
        while (live.length && !ended) {
          const event = live.shift()!;
          // The live feed overlaps the replay: skip what the replay already gave.
          if (last !== undefined && !log.isAfter(event.position, last)) continue;
          last = event.position;
          if (accept(event)) yield event;
        }
        if (ended) continue;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      // Ended from within too (a failed read), where no one calls `return`: the listener goes with it.
      stop();
    }
  }

  const iterator = generate();
  const stop = () => {
    if (!done) unwatch?.();
    done = true;
    detach();
    wake?.();
  };
  const followed: AsyncIterableIterator<LoggedEvent> = {
    next: () => iterator.next(),
    return: async (value?: unknown) => {
      stop();
      return iterator.return(value as LoggedEvent);
    },
    throw: async (error?: unknown) => {
      stop();
      return iterator.throw(error);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return followed;
}
