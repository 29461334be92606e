import { ErrorCode, graphError } from '../../lib/errors.ts';

/**
 * An async iterator fed by pushes: one per subscriber, so a slow reader queues its own events and
 * never holds up the others. Bounded: past `capacity` waiting events, or `bytes.max` bytes of them,
 * the subscriber is ended with an error rather than letting memory grow without limit.
 */
export interface PushIterator<T> extends AsyncIterableIterator<T> {
  push(value: T): void;
  /** Ends the stream after what is queued (with a final error when given). */
  end(error?: Error): void;
  /** Ends the stream at once with `error`: what is queued is dropped (the subscriber may no longer see it). */
  cut(error: Error): void;
  /** Calls back once when the stream ends, however it ends (at once if it has). */
  whenEnded(callback: () => void): void;
  /**
   * From now on, values go straight to `sink` as they are pushed instead of waiting for `next()`,
   * what was queued first; `next()` then only tells the end (done, or the final error). While the
   * sink is full, values wait in this queue, bounded as before. False when the stream has ended
   * already: the reader drains it by `next()` as before.
   */
  deliverTo(sink: PushSink<T>): boolean;
}

/** Where a subscriber's values are written without a pull per value: its connection. */
export interface PushSink<T> {
  /** Writes one value; false once the connection holds enough unsent, so the next values wait until `onWritable`'s callback. */
  write(value: T): boolean;
  /** Calls back once, when the connection can take more (never, if it closes first). */
  onWritable(callback: () => void): void;
}

/** Whether a stream a transport got can be written to directly. */
export function isPushIterator<T>(value: unknown): value is PushIterator<T> {
  return typeof value === 'object' && value !== null && typeof (value as Partial<PushIterator<T>>).deliverTo === 'function';
}

/**
 * The gateway's bound on the bytes queued for one subscriber (MAX_SUBSCRIBER_QUEUED_BYTES): 128 of
 * the largest webhook events (64 KiB), where 10,000 such events were 640 MB for one stalled reader.
 */
export const DEFAULT_SUBSCRIBER_QUEUED_BYTES = 8 * 1024 * 1024;

export interface PushIteratorOptions<T> {
  /** Values that may wait for the reader; one more ends the stream with SUBSCRIBER_TOO_SLOW. @default 10000 */
  capacity?: number;
  /**
   * Bytes of the values that may wait for the reader; one more ends the stream with
   * SUBSCRIBER_TOO_SLOW, though a value waits alone whatever its size (a reader whose connection
   * is full for a moment is not ended for one large event). `sizeOf` is asked once per value that
   * has to wait, never for one handed on at once. @default none: only `capacity` bounds the queue
   */
  bytes?: { max: number; sizeOf: (value: T) => number };
  /** Called once when the stream ends, however it ends. */
  onReturn?: () => void;
}

export function createPushIterator<T>({ capacity = 10_000, bytes, onReturn }: PushIteratorOptions<T> = {}): PushIterator<T> {
  const queue: T[] = [];
  /** The size of each queued value, in step with `queue` (empty without a byte bound). */
  const sizes: number[] = [];
  let queuedBytes = 0;
  let waiting: ((result: IteratorResult<T>) => void) | undefined;
  let failing: ((error: Error) => void) | undefined;
  let ended = false;
  let finalError: Error | undefined;
  let sink: PushSink<T> | undefined;
  /** The sink said it is full: values wait in `queue` until it can take more. */
  let blocked = false;
  const endings: (() => void)[] = [];

  const finish = () => {
    if (ended) return;
    ended = true;
    onReturn?.();
    for (const callback of endings.splice(0)) callback();
  };

  /** `behind` says which bound was passed: the client's own doing, and one it can recover from without losing an event, so the message says how. */
  const tooSlow = (behind: string) =>
    iterator.end(
      graphError(
        `this subscriber fell ${behind} behind and was disconnected; subscribe again with \`after\` set to the \`cursor\` of the last event received to get the events missed since`,
        { code: ErrorCode.SubscriberTooSlow },
      ),
    );

  /** The oldest queued value, its bytes given back. */
  const take = (): T => {
    if (bytes) queuedBytes -= sizes.shift()!;
    return queue.shift()!;
  };
  const clear = () => {
    queue.length = 0;
    sizes.length = 0;
    queuedBytes = 0;
  };

  /** Tells a waiting reader the stream is over, with its final error if any, once nothing is left to read. */
  const settleEnd = () => {
    if (!waiting || queue.length) return;
    const [resolve, reject] = [waiting, failing!];
    waiting = failing = undefined;
    if (!finalError) return resolve({ value: undefined, done: true });
    // Told once, as `next` does: a reader that reads on hears only that the stream is done.
    const error = finalError;
    finalError = undefined;
    reject(error);
  };

  /** Writes what waits to the sink until it is full again; once all is written, an ended stream tells its reader. */
  const flush = () => {
    blocked = false;
    while (queue.length) {
      if (!sink!.write(take())) {
        blocked = true;
        sink!.onWritable(flush);
        return;
      }
    }
    if (ended) settleEnd();
  };

  const iterator: PushIterator<T> = {
    push(value) {
      if (ended) return;
      if (sink && !blocked) {
        if (!sink.write(value)) {
          blocked = true;
          sink.onWritable(flush);
        }
        return;
      }
      if (waiting && !sink) {
        const resolve = waiting;
        waiting = failing = undefined;
        resolve({ value, done: false });
        return;
      }
      if (queue.length >= capacity) {
        tooSlow(`${capacity} events`);
        return;
      }
      if (bytes) {
        // Measured only here, for a value that has to wait: one handed on at once costs nothing.
        const size = bytes.sizeOf(value);
        if (queue.length > 0 && queuedBytes + size > bytes.max) {
          tooSlow(`more than ${bytes.max} bytes of events`);
          return;
        }
        queuedBytes += size;
        sizes.push(size);
      }
      queue.push(value);
    },
    deliverTo(target) {
      if (ended) return false;
      sink = target;
      flush();
      return true;
    },
    end(error) {
      if (ended) return;
      finalError = error;
      finish();
      settleEnd();
    },
    cut(error) {
      if (ended) return;
      clear();
      iterator.end(error);
    },
    whenEnded(callback) {
      if (ended) callback();
      else endings.push(callback);
    },
    next() {
      // With a sink, queued values are the sink's to write, in order; the reader only hears the end.
      if (queue.length && !sink) return Promise.resolve({ value: take(), done: false });
      // Ended, with nothing left for the sink to write (`flush` settles the end after the last one).
      if (ended && queue.length === 0) {
        if (finalError) {
          const error = finalError;
          finalError = undefined;
          return Promise.reject(error);
        }
        return Promise.resolve({ value: undefined, done: true });
      }
      return new Promise((resolve, reject) => {
        waiting = resolve;
        failing = reject;
      });
    },
    return: () => close(),
    throw(error) {
      void close();
      return Promise.reject(error);
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  function close(): Promise<IteratorResult<T>> {
    clear();
    finish();
    if (waiting) {
      const resolve = waiting;
      waiting = failing = undefined;
      resolve({ value: undefined, done: true });
    }
    return Promise.resolve({ value: undefined, done: true });
  }
  return iterator;
}
