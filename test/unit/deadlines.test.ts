import { describe, expect, it } from 'vitest';
import { createDeadlines } from '../../subgraphs/kit/transport.ts';

describe('upstream call deadlines', () => {
  it('share one signal among calls started within the slack, and abort it at most that late', async () => {
    const deadlines = createDeadlines(20);
    const first = deadlines(50);
    const second = deadlines(50);
    const otherTimeout = deadlines(80);
    expect(second.signal).toBe(first.signal);
    expect(otherTimeout.signal).not.toBe(first.signal);
    expect(second.at - first.at).toBeLessThan(20);

    const started = Date.now();
    const reason = await new Promise<unknown>((resolve) => first.signal.addEventListener('abort', () => resolve(first.signal.reason)));
    const waited = Date.now() - started;
    expect((reason as Error).name).toBe('TimeoutError');
    expect(waited).toBeGreaterThanOrEqual(45);
    expect(Date.now()).toBeGreaterThanOrEqual(second.at);
    expect(otherTimeout.signal.aborted).toBe(false);
  });

  it('start a new signal once the slack has passed', async () => {
    const deadlines = createDeadlines(5);
    const early = deadlines(1000);
    await new Promise((resolve) => setTimeout(resolve, 15));
    expect(deadlines(1000).signal).not.toBe(early.signal);
  });

  it('never abort a batch whose calls are all over once a later call has opened another', async () => {
    const deadlines = createDeadlines(5);
    const finished = deadlines(30);
    finished.release();
    finished.release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const later = deadlines(30);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(finished.signal.aborted).toBe(false);
    // The later call was never released: its deadline still holds.
    expect(later.signal.aborted).toBe(true);
  });

  it('still abort a batch when one of its calls is over and another is not', async () => {
    const deadlines = createDeadlines(5);
    const over = deadlines(30);
    const pending = deadlines(30);
    expect(pending.signal).toBe(over.signal);
    over.release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    deadlines(30);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(pending.signal.aborted).toBe(true);
  });
});
