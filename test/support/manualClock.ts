import type { DeadlineClock } from '../../lib/deadlines.ts';

export interface ManualClock extends DeadlineClock {
  /** Moves time forward, running every timer that falls due on the way, in order. */
  advance(ms: number): void;
  /** Timers armed and not yet run or cancelled. */
  pending(): number;
  /** Milliseconds until the next timer runs; undefined when none is armed. */
  nextDueIn(): number | undefined;
}

/** A clock that stands still until a test moves it: timers run only inside `advance`. */
export function createManualClock(start = 0): ManualClock {
  let now = start;
  let timers: { at: number; callback: () => void }[] = [];
  return {
    now: () => now,
    after(ms, callback) {
      const timer = { at: now + ms, callback };
      timers.push(timer);
      return () => {
        timers = timers.filter((candidate) => candidate !== timer);
      };
    },
    advance(ms) {
      const target = now + ms;
      for (;;) {
        const due = timers.filter((timer) => timer.at <= target).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        timers = timers.filter((timer) => timer !== due);
        now = due.at;
        due.callback();
      }
      now = target;
    },
    pending: () => timers.length,
    nextDueIn: () => (timers.length ? Math.min(...timers.map((timer) => timer.at)) - now : undefined),
  };
}
