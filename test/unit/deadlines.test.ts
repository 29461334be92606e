import { describe, expect, it } from 'vitest';
import { createDeadlines } from '../../subgraphs/kit/transport.ts';

type Deadline = ReturnType<ReturnType<typeof createDeadlines>>;

/** What the deadline cancels a watching call with, once it has; undefined while it has not. */
function watched(deadline: Deadline): { reason?: Error } {
  const seen: { reason?: Error } = {};
  deadline.watch((reason) => {
    seen.reason = reason;
  });
  return seen;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('upstream call deadlines', () => {
  it('share one timer among calls started within the slack, and cancel them at most that late', async () => {
    const deadlines = createDeadlines(20);
    const first = deadlines(50);
    const second = deadlines(50);
    const otherTimeout = deadlines(80);
    expect(second.at - first.at).toBeLessThan(20);
    const [firstSeen, secondSeen, otherSeen] = [watched(first), watched(second), watched(otherTimeout)];

    const started = Date.now();
    const reason = await new Promise<Error>((resolve) => first.watch(resolve));
    const waited = Date.now() - started;
    expect(reason.name).toBe('TimeoutError');
    expect(waited).toBeGreaterThanOrEqual(45);
    expect(Date.now()).toBeGreaterThanOrEqual(second.at);
    // One timer fired for both: the same reason, at the same moment.
    expect(firstSeen.reason).toBe(reason);
    expect(secondSeen.reason).toBe(reason);
    expect(otherSeen.reason).toBeUndefined();
  });

  it('start a new batch once the slack has passed', async () => {
    const deadlines = createDeadlines(5);
    const early = watched(deadlines(40));
    await wait(15);
    const late = watched(deadlines(40));
    await wait(40);
    expect(early.reason).toBeDefined();
    expect(late.reason).toBeUndefined();
  });

  it('never cancel a call that stopped watching', async () => {
    const deadlines = createDeadlines(5);
    const deadline = deadlines(20);
    let cancelled = false;
    const unwatch = deadline.watch(() => {
      cancelled = true;
    });
    unwatch();
    const other = watched(deadline);
    await wait(40);
    expect(cancelled).toBe(false);
    expect(other.reason).toBeDefined();
  });

  it('cancel at once a call that starts watching after its deadline has passed', async () => {
    const deadlines = createDeadlines(5);
    const deadline = deadlines(10);
    await wait(30);
    expect(watched(deadline).reason?.name).toBe('TimeoutError');
  });

  it('never fire a batch whose calls are all over once a later call has opened another', async () => {
    const deadlines = createDeadlines(5);
    const finished = deadlines(30);
    const finishedSeen = watched(finished);
    finished.release();
    finished.release();
    await wait(10);
    const later = watched(deadlines(30));
    await wait(50);
    expect(finishedSeen.reason).toBeUndefined();
    // The later call was never released: its deadline still holds.
    expect(later.reason).toBeDefined();
  });

  it('still fire a batch when one of its calls is over and another is not', async () => {
    const deadlines = createDeadlines(5);
    const over = deadlines(30);
    const pending = deadlines(30);
    const pendingSeen = watched(pending);
    over.release();
    await wait(10);
    deadlines(30);
    await wait(40);
    expect(pendingSeen.reason).toBeDefined();
  });
});
