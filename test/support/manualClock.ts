import type { Clock } from '../../subgraphs/kit/clock.ts';

export interface ManualClock extends Clock {
  /** Moves time forward, firing every timer that falls due, in order. */
  advance(ms: number): void;
  /** Timers waiting to fire. */
  pending(): number;
  /** Milliseconds until the next timer fires; undefined when none waits. */
  nextDueIn(): number | undefined;
}

/** A clock that moves only when a test says so: no sleeping, no timing assumptions. */
export function createManualClock(start = Date.now()): ManualClock {
  let now = start;
  let nextId = 1;
  const timers = new Map<number, { at: number; callback: () => void }>();
  return {
    now: () => now,
    setTimeout(callback, ms) {
      const id = nextId++;
      timers.set(id, { at: now + Math.max(0, ms), callback });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, timer]) => timer.at <= until).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
        if (!due) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].callback();
      }
      now = until;
    },
    pending: () => timers.size,
    nextDueIn() {
      const due = [...timers.values()].map((timer) => timer.at);
      return due.length ? Math.min(...due) - now : undefined;
    },
  };
}
