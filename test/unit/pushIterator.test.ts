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

  it('tells a reader waiting when it ends its final error once: read on, it is done (SSE wrote the error twice)', async () => {
    for (const waitingFirst of [true, false]) {
      const stream = createPushIterator<number>();
      const waiting = waitingFirst ? stream.next() : undefined;
      stream.end(new Error('ended'));
      await expect(waiting ?? stream.next()).rejects.toThrow('ended');
      await expect(stream.next()).resolves.toEqual({ value: undefined, done: true });
    }
  });
});

describe('a push iterator bounded in bytes', () => {
  /** Each value is its own size in bytes; every measurement is noted. */
  const measuring = () => {
    const measured: number[] = [];
    return { measured, sizeOf: (value: number) => (measured.push(value), value) };
  };
  const TOO_SLOW_IN_BYTES = {
    message: 'this subscriber fell more than 100 bytes of events behind and was disconnected; subscribe again with `after` set to the `cursor` of the last event received to get the events missed since',
    extensions: { code: 'SUBSCRIBER_TOO_SLOW' },
  };

  it('measures only the values that wait: none handed to a reader or a sink at once', async () => {
    const { measured, sizeOf } = measuring();
    const stream = createPushIterator<number>({ bytes: { max: 100, sizeOf } });
    const pulled = stream.next();
    stream.push(60);
    await expect(pulled).resolves.toEqual({ value: 60, done: false });
    const { sink, written, drain } = boundedSink(2);
    stream.deliverTo(sink);
    stream.push(70);
    stream.push(80);
    expect(written).toEqual([70, 80]);
    expect(measured).toEqual([]);
    // The sink is full: these wait, and are measured once each (not again as they are written).
    stream.push(30);
    stream.push(40);
    expect(measured).toEqual([30, 40]);
    drain(10);
    expect(written).toEqual([70, 80, 30, 40]);
    expect(measured).toEqual([30, 40]);
  });

  it('ends a subscriber with SUBSCRIBER_TOO_SLOW saying the bytes once what waits would pass them, far below the count, after writing what waited', async () => {
    let returned = 0;
    const stream = createPushIterator<number>({ capacity: 1000, bytes: { max: 100, ...measuring() }, onReturn: () => (returned += 1) });
    const { sink, written, drain } = boundedSink(1);
    stream.deliverTo(sink);
    const pulled = stream.next();
    stream.push(1);
    // 50 + 40 = 90 bytes wait; 90 + 11 would pass 100.
    for (const value of [50, 40]) stream.push(value);
    expect(returned).toBe(0);
    stream.push(11);
    expect(returned).toBe(1);
    stream.push(1);
    drain(10);
    expect(written).toEqual([1, 50, 40]);
    await expect(pulled).rejects.toMatchObject(TOO_SLOW_IN_BYTES);
  });

  it('gives back the bytes of a value leaving the queue, by a pull or to the sink', async () => {
    const stream = createPushIterator<number>({ bytes: { max: 100, ...measuring() } });
    // No reader yet: 90 bytes wait.
    stream.push(50);
    stream.push(40);
    await expect(stream.next()).resolves.toEqual({ value: 50, done: false });
    // 40 wait: 60 more fit, as they would not had the 50 pulled stayed counted.
    stream.push(60);
    const { sink, written, drain } = boundedSink(1);
    stream.deliverTo(sink);
    expect(written).toEqual([40]);
    // 60 wait behind the full sink; once it is written, 100 fit again, and not a byte more.
    drain(1);
    expect(written).toEqual([40, 60]);
    const pulled = stream.next();
    stream.push(70);
    stream.push(30);
    stream.push(1);
    drain(10);
    expect(written).toEqual([40, 60, 70, 30]);
    await expect(pulled).rejects.toMatchObject(TOO_SLOW_IN_BYTES);
  });

  it('lets a value larger than the bound wait alone, and no other behind it', async () => {
    const stream = createPushIterator<number>({ bytes: { max: 100, ...measuring() } });
    stream.push(500);
    stream.push(1);
    await expect(stream.next()).resolves.toEqual({ value: 500, done: false });
    await expect(stream.next()).rejects.toMatchObject(TOO_SLOW_IN_BYTES);
  });

  it('ends a subscriber at whichever bound is passed first, its message naming that one', async () => {
    const small = createPushIterator<number>({ capacity: 3, bytes: { max: 100, ...measuring() } });
    for (const value of [1, 2, 3, 4]) small.push(value);
    for (const value of [1, 2, 3]) await expect(small.next()).resolves.toEqual({ value, done: false });
    await expect(small.next()).rejects.toMatchObject({ message: expect.stringMatching(/^this subscriber fell 3 events behind and was disconnected; subscribe again with `after`/), extensions: { code: 'SUBSCRIBER_TOO_SLOW' } });
    const large = createPushIterator<number>({ capacity: 3, bytes: { max: 100, ...measuring() } });
    for (const value of [60, 60]) large.push(value);
    await expect(large.next()).resolves.toEqual({ value: 60, done: false });
    await expect(large.next()).rejects.toMatchObject(TOO_SLOW_IN_BYTES);
  });
});
