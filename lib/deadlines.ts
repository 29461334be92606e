import type { WatchDeadline } from './bufferedExchange.ts';

/** One call's deadline, retries and body included. */
export interface Deadline {
  at: number;
  watch: WatchDeadline;
  /** The call is over, body read: its batch's timer no longer has to fire for it. Idempotent. */
  release(): void;
}

interface DeadlineBatch {
  from: number;
  ms: number;
  cancelTimer(): void;
  /** Set once the timer has fired: a late watcher is cancelled at once. */
  reason?: Error;
  watchers: Set<(reason: Error) => void>;
  calls: number;
}

/** The time deadlines run on; tests pass one they move by hand. */
export interface DeadlineClock {
  now(): number;
  /** Calls `callback` once `ms` have passed, unless the returned function cancels it first. */
  after(ms: number, callback: () => void): () => void;
}

/** Real time, with timers that never keep a process alive on their own. */
export const SYSTEM_CLOCK: DeadlineClock = {
  now: Date.now,
  after(ms, callback) {
    const timer = setTimeout(callback, ms);
    // A finished batch must not keep the process alive until its deadline.
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * Deadlines of calls that start within the same few milliseconds share one timer, which fires
 * `slackMs` after the last of them is due: a call is cut off at most that much late. A timer of its
 * own for every call was a tenth of the transport's cost on a burst of upstream calls (20
 * redemptions, then their rewards); an abort signal shared by the batch cost an event listener per
 * call, so the batch keeps a plain set of the calls it has to cancel.
 *
 * A batch's timer is cleared once no call can join it and all of its calls are over. Left armed,
 * it cancelled long-finished calls: at one call every 20 ms or more, every call built its error
 * and dispatched an abort ten seconds later, a tenth of the subgraph's CPU.
 */
export function createDeadlines(slackMs = 10, clock: DeadlineClock = SYSTEM_CLOCK): (ms: number) => Deadline {
  let shared: DeadlineBatch | undefined;
  const retire = (batch: DeadlineBatch) => {
    if (batch.calls === 0 && batch !== shared) batch.cancelTimer();
  };
  const expire = (batch: DeadlineBatch) => {
    batch.reason = new DOMException(`no answer within ${batch.ms} ms`, 'TimeoutError');
    for (const cancel of batch.watchers) cancel(batch.reason);
    batch.watchers.clear();
  };
  return (ms) => {
    const now = clock.now();
    if (!shared || shared.ms !== ms || now - shared.from >= slackMs) {
      const previous = shared;
      const batch: DeadlineBatch = { from: now, ms, cancelTimer: () => {}, watchers: new Set(), calls: 0 };
      batch.cancelTimer = clock.after(ms + slackMs, () => expire(batch));
      shared = batch;
      if (previous) retire(previous);
    }
    const batch = shared;
    batch.calls += 1;
    let released = false;
    return {
      at: now + ms,
      watch(cancel) {
        if (batch.reason) {
          cancel(batch.reason);
          return () => {};
        }
        batch.watchers.add(cancel);
        return () => batch.watchers.delete(cancel);
      },
      release() {
        if (released) return;
        released = true;
        batch.calls -= 1;
        retire(batch);
      },
    };
  };
}
