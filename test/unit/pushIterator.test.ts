import { describe, expect, it } from 'vitest';
import { createPushIterator, type PushSink } from '../../gateway/subscriptions/pushIterator.ts';

/** A sink that takes nothing until told to: its backlog is what it was given and has not taken. */
function stalledSink() {
  const written: number[] = [];
  let taken = 0;
  const sink: PushSink<number> = {
    write: (value) => void written.push(value),
    get backlog() {
      return written.length - taken;
    },
  };
  return { sink, written, take: (count: number) => void (taken += count) };
}

describe('a push iterator delivering to a sink', () => {
  it('writes what was queued first, in order, then each value as it is pushed, with no pull', async () => {
    const stream = createPushIterator<number>({ capacity: 10 });
    stream.push(1);
    stream.push(2);
    const { sink, written } = stalledSink();
    expect(stream.deliverTo(sink)).toBe(true);
    stream.push(3);
    expect(written).toEqual([1, 2, 3]);
    // The reader's pull now only tells the end.
    const pulled = stream.next();
    stream.end();
    await expect(pulled).resolves.toEqual({ value: undefined, done: true });
  });

  it('ends a subscriber whose sink holds `capacity` values untaken with SUBSCRIBER_TOO_SLOW, and writes no more', async () => {
    let returned = 0;
    const stream = createPushIterator<number>({ capacity: 3, onReturn: () => (returned += 1) });
    const { sink, written, take } = stalledSink();
    stream.deliverTo(sink);
    const pulled = stream.next();
    stream.push(1);
    stream.push(2);
    take(1);
    stream.push(3);
    stream.push(4);
    expect(written).toEqual([1, 2, 3, 4]);
    // Three written and untaken: the next is one too many.
    stream.push(5);
    await expect(pulled).rejects.toMatchObject({ extensions: { code: 'SUBSCRIBER_TOO_SLOW' } });
    stream.push(6);
    expect(written).toEqual([1, 2, 3, 4]);
    expect(returned).toBe(1);
  });

  it('refuses a sink once ended: what is queued is drained by pulls as before', async () => {
    const stream = createPushIterator<number>();
    stream.push(1);
    stream.end();
    expect(stream.deliverTo(stalledSink().sink)).toBe(false);
    await expect(stream.next()).resolves.toEqual({ value: 1, done: false });
    await expect(stream.next()).resolves.toEqual({ value: undefined, done: true });
  });
});
