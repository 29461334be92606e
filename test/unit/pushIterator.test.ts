import { describe, expect, it } from 'vitest';
import { createPushIterator, type PushSink } from '../../gateway/subscriptions/pushIterator.ts';

/** A sink that takes `room` values, then says it is full until `drain` is called. */
function boundedSink(room = Number.POSITIVE_INFINITY) {
  const written: number[] = [];
  let free = room;
  let writable: (() => void) | undefined;
  const sink: PushSink<number> = {
    write(value) {
      written.push(value);
      free -= 1;
      return free > 0;
    },
    onWritable(callback) {
      expect(writable).toBeUndefined();
      writable = callback;
    },
  };
  return {
    sink,
    written,
    /** The connection took everything: room again, and the iterator is told. */
    drain(newRoom = room) {
      free = newRoom;
      const callback = writable;
      writable = undefined;
      callback?.();
    },
  };
}

describe('a push iterator delivering to a sink', () => {
  it('writes what was queued first, in order, then each value as it is pushed, with no pull', async () => {
    const stream = createPushIterator<number>({ capacity: 10 });
    stream.push(1);
    stream.push(2);
    const { sink, written } = boundedSink();
    expect(stream.deliverTo(sink)).toBe(true);
    stream.push(3);
    expect(written).toEqual([1, 2, 3]);
    // The reader's pull now only tells the end.
    const pulled = stream.next();
    stream.end();
    await expect(pulled).resolves.toEqual({ value: undefined, done: true });
  });

  it('holds values back while the sink is full, writes them in order once it drains, and only then tells the end', async () => {
    const stream = createPushIterator<number>({ capacity: 10 });
    const { sink, written, drain } = boundedSink(2);
    stream.deliverTo(sink);
    const pulled = stream.next();
    for (const value of [1, 2, 3, 4]) stream.push(value);
    // Full after two: the rest wait in the subscriber's own queue, not in the connection.
    expect(written).toEqual([1, 2]);
    stream.end();
    let settled = false;
    void pulled.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    drain(10);
    expect(written).toEqual([1, 2, 3, 4]);
    await expect(pulled).resolves.toEqual({ value: undefined, done: true });
  });

  it('ends a subscriber with `capacity` values waiting behind a full sink with SUBSCRIBER_TOO_SLOW, after writing what waited', async () => {
    let returned = 0;
    const stream = createPushIterator<number>({ capacity: 3, onReturn: () => (returned += 1) });
    const { sink, written, drain } = boundedSink(1);
    stream.deliverTo(sink);
    const pulled = stream.next();
    for (const value of [1, 2, 3, 4]) stream.push(value);
    expect(written).toEqual([1]);
    // Three wait: the next is one too many.
    stream.push(5);
    expect(returned).toBe(1);
    stream.push(6);
    drain(10);
    expect(written).toEqual([1, 2, 3, 4]);
    await expect(pulled).rejects.toMatchObject({ extensions: { code: 'SUBSCRIBER_TOO_SLOW' } });
  });

  it('refuses a sink once ended: what is queued is drained by pulls as before', async () => {
    const stream = createPushIterator<number>();
    stream.push(1);
    stream.end();
    expect(stream.deliverTo(boundedSink().sink)).toBe(false);
    await expect(stream.next()).resolves.toEqual({ value: 1, done: false });
    await expect(stream.next()).resolves.toEqual({ value: undefined, done: true });
  });
});
