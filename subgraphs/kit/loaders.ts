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
 * aborted, a task whose turn comes fails with `cancelled()` instead of running.
 */
export function createLimiter(concurrency: number, signal?: Cancellation, cancelled: () => Error = () => new Error('cancelled')): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    // A finishing task hands its slot straight to the next in line, so a newcomer cannot overtake.
    if (running < concurrency) running += 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      if (signal?.aborted) throw cancelled();
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
}

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

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
  const limit = createLimiter(concurrency, signal, cancelled);
  return new DataLoader<K, V, C>(
    // A load adopts the promise it is resolved with, so each load settles with its own call while
    // the tick's keys still go out as one batch.
    async (keys) =>
      keys.map((key) =>
        limit(() => fetchOne(key)).catch((error: unknown) => {
          throw asError(error);
        }),
      ) as unknown as (V | Error)[],
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
