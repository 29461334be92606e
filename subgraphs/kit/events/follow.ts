import { badUserInput } from '../errors.ts';
import type { EventLog, LoggedEvent } from './eventLog.ts';

const REPLAY_BATCH = 500;

/**
 * Follows the log from a position: first what it still holds after `after` (when given), then
 * live events, with no gap and no repeat between the two. Without `after`, only events appended
 * from now on.
 *
 * Event cursors are not signed, so `after` is checked here: a position of no form this log writes,
 * or one past its newest event, is BAD_USER_INPUT naming `after`. Followed, a position ahead of the
 * log would skip every live event until the log caught up with it: a stream that stays silent.
 */
export async function followLog(log: EventLog, after: string | undefined, accept: (event: LoggedEvent) => boolean = () => true): Promise<AsyncIterableIterator<LoggedEvent>> {
  if (after !== undefined) {
    if (!log.recognises(after)) throw badUserInput('after', 'is not a cursor of this event stream');
    const head = await log.head();
    if (head !== undefined && log.isAfter(after, head)) throw badUserInput('after', 'is ahead of the newest event: resume from the cursor of an event received');
  }
  const live: LoggedEvent[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  const detach = log.onAppend((event) => {
    live.push(event);
    wake?.();
  });

  async function* generate(): AsyncGenerator<LoggedEvent> {
    let last = after;
    if (after !== undefined) {
      for (;;) {
        const batch = await log.readAfter(last, REPLAY_BATCH);
        for (const event of batch) {
          last = event.position;
          if (accept(event)) yield event;
        }
        if (batch.length < REPLAY_BATCH) break;
      }
    }
    while (!done) {
      while (live.length) {
        const event = live.shift()!;
        // The live feed overlaps the replay: skip what the replay already gave.
        if (last !== undefined && !log.isAfter(event.position, last)) continue;
        last = event.position;
        if (accept(event)) yield event;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  }

  const iterator = generate();
  const stop = () => {
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
