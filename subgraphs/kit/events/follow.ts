import type { EventLog, LoggedEvent } from './eventLog.ts';

const REPLAY_BATCH = 500;

/**
 * Follows the log from a position: first what it still holds after `after` (when given), then
 * live events, with no gap and no repeat between the two. Without `after`, only events appended
 * from now on.
 */
export function followLog(log: EventLog, after: string | undefined, accept: (event: LoggedEvent) => boolean = () => true): AsyncIterableIterator<LoggedEvent> {
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
  return {
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
}
