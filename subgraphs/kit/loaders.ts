import DataLoader from 'dataloader';

/** What the loaders read of a request's cancellation: an AbortSignal, or a request's call scope. */
export interface Cancellation {
  readonly aborted: boolean;
}

export interface PerKeyLoaderOptions<K, C> {
  /**
   * How many of one loader's upstream calls may run at once. Half the transport's sockets per
   * origin: a typical page (20 items) goes out in one round, and one request cannot take every
   * socket from the others. @default 32
   */
  concurrency?: number;
  cacheKeyFn?: (key: K) => C;
  /**
   * The request's cancellation: a key still waiting for its turn when the request is cancelled
   * fails without being fetched.
   */
  signal?: Cancellation | undefined;
  /** The error of a key that was not fetched because the request was cancelled. */
  cancelled?: () => Error;
}

/**
 * Runs at most `concurrency` tasks at once; the others wait their turn in order. Once `signal` is
 * aborted, a task whose turn comes fails with `cancelled()` instead of running. What a task throws
 * that is not an Error is rejected as one.
 */
export function createLimiter(concurrency: number, signal?: Cancellation, cancelled: () => Error = cancelledByDefault): <T>(task: () => Promise<T>) => Promise<T> {
  const limiter = new Limiter(concurrency, signal, cancelled);
  return (task) => limiter.run(runTask, task);
}

const runTask = <T>(task: () => Promise<T>): Promise<T> => task();
const cancelledByDefault = () => new Error('cancelled');

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/**
 * The limiter behind both: a fetch and its key rather than a closure over them, and one `then`
 * per call. An async wrapper, a closure and a `catch` per key were three promises, two turns of
 * the microtask queue and a function for each of the dozens of calls an operation makes.
 */
class Limiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly signal: Cancellation | undefined,
    private readonly cancelled: () => Error,
  ) {}

  /** `fetch(key)` once a slot is free; what it throws, made an Error if it is none. */
  run<K, T>(fetch: (key: K) => Promise<T>, key: K): Promise<T> {
    // A finishing task hands its slot straight to the next in line, so a newcomer cannot overtake.
    if (this.running < this.concurrency) {
      this.running += 1;
      return this.start(fetch, key);
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve)).then(() => this.start(fetch, key));
  }

  private start<K, T>(fetch: (key: K) => Promise<T>, key: K): Promise<T> {
    let fetched: Promise<T>;
    try {
      if (this.signal?.aborted) throw this.cancelled();
      fetched = fetch(key);
    } catch (error) {
      this.release();
      return Promise.reject(asError(error));
    }
    return fetched.then(
      (value) => {
        this.release();
        return value;
      },
      (error: unknown) => {
        this.release();
        throw asError(error);
      },
    );
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }
}

/**
 * A DataLoader for an upstream with no batch endpoint: each distinct key costs one call, made
 * with bounded concurrency, and one failing key rejects only its own load.
 *
 * Each key settles on its own. Batched, every load of a tick waited for the slowest call of the
 * batch, so the calls of a nested field (a redemption's reward) went out only once the last of its
 * parents had arrived; now each goes out as soon as its own parent is there. The cache still gives
 * a key loaded twice in a request one call.
 */
export function createPerKeyLoader<K, V, C = K>(fetchOne: (key: K) => Promise<V>, { concurrency = 32, cacheKeyFn, signal, cancelled }: PerKeyLoaderOptions<K, C> = {}): DataLoader<K, V, C> {
  const limiter = new Limiter(concurrency, signal, cancelled ?? cancelledByDefault);
  return new DataLoader<K, V, C>(
    // A load adopts the promise it is resolved with, so each load settles with its own call while
    // the tick's keys still go out as one batch.
    async (keys) => keys.map((key) => limiter.run(fetchOne, key)) as unknown as (V | Error)[],
    cacheKeyFn ? { cacheKeyFn } : {},
  );
}

/**
 * A loader of one upstream resource that has no key (a whole list, the account's stats): however
 * many fields of a request ask for it, it is fetched once.
 */
export function createOnceLoader<V>(fetch: () => Promise<V>): DataLoader<'all', V> {
  return new DataLoader(async (keys) => {
    const value = await fetch();
    return keys.map(() => value);
  });
}
