import { describe, expect, it } from 'vitest';
import { createDeadlines } from '../../lib/deadlines.ts';
import { createManualClock } from '../support/manualClock.ts';

type Deadline = ReturnType<ReturnType<typeof createDeadlines>>;

/** What the deadline cancels a watching call with, once it has; undefined while it has not. */
function watched(deadline: Deadline): { reason?: Error } {
  const seen: { reason?: Error } = {};
  deadline.watch((reason) => {
    seen.reason = reason;
  });
  return seen;
}

describe('upstream call deadlines', () => {
  it('share one timer among calls started within the slack, and cancel them at most that late', () => {
    const clock = createManualClock();
    const deadlines = createDeadlines(20, clock);
    const first = deadlines(50);
    clock.advance(15);
    const second = deadlines(50);
    const otherTimeout = deadlines(80);
    expect(clock.pending()).toBe(2);
    const [firstSeen, secondSeen, otherSeen] = [watched(first), watched(second), watched(otherTimeout)];

    clock.advance(54);
    expect(firstSeen.reason).toBeUndefined();
    clock.advance(1);
    // One timer fired for both, when the later was due and no more than the slack after the first.
    expect(clock.now()).toBeGreaterThanOrEqual(second.at);
    expect(clock.now()).toBeLessThanOrEqual(first.at + 20);
    expect(firstSeen.reason?.name).toBe('TimeoutError');
    expect(secondSeen.reason).toBe(firstSeen.reason);
    expect(otherSeen.reason).toBeUndefined();
  });

  it('start a new batch once the slack has passed', () => {
    const clock = createManualClock();
    const deadlines = createDeadlines(5, clock);
    const early = watched(deadlines(40));
    clock.advance(15);
    const late = watched(deadlines(40));
    clock.advance(40);
    expect(early.reason).toBeDefined();
    expect(late.reason).toBeUndefined();
  });

  it('never cancel a call that stopped watching', () => {
    const clock = createManualClock();
    const deadlines = createDeadlines(5, clock);
    const deadline = deadlines(20);
    let cancelled = false;
    const unwatch = deadline.watch(() => {
      cancelled = true;
    });
    unwatch();
    const other = watched(deadline);
    clock.advance(40);
    expect(cancelled).toBe(false);
    expect(other.reason).toBeDefined();
  });

  it('cancel at once a call that starts watching after its deadline has passed', () => {
    const clock = createManualClock();
    const deadlines = createDeadlines(5, clock);
    const deadline = deadlines(10);
    clock.advance(30);
    expect(watched(deadline).reason?.name).toBe('TimeoutError');
  });

  it('never fire a batch whose calls are all over once a later call has opened another', () => {
    const clock = createManualClock();
    const deadlines = createDeadlines(5, clock);
    const finished = deadlines(30);
    const finishedSeen = watched(finished);
    finished.release();
    finished.release();
    clock.advance(10);
    const later = watched(deadlines(30));
    // The finished batch's timer is gone, not merely ignored.
    expect(clock.pending()).toBe(1);
    clock.advance(50);
    expect(finishedSeen.reason).toBeUndefined();
    // The later call was never released: its deadline still holds.
    expect(later.reason).toBeDefined();
  });

  it('still fire a batch when one of its calls is over and another is not', () => {
    const clock = createManualClock();
    const deadlines = createDeadlines(5, clock);
    const over = deadlines(30);
    const pending = deadlines(30);
    const pendingSeen = watched(pending);
    over.release();
    clock.advance(10);
    deadlines(30);
    clock.advance(40);
    expect(pendingSeen.reason).toBeDefined();
  });
});
