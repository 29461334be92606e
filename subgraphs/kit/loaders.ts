import DataLoader from 'dataloader';

export interface PerKeyLoaderOptions<K, C> {
  /**
   * How many upstream calls may run at once for one batch. Half the transport's sockets per
   * origin: a typical page (20 items) goes out in one round, and one request cannot take every
   * socket from the others. @default 32
   */
  concurrency?: number;
  cacheKeyFn?: (key: K) => C;
}

/**
 * A DataLoader for an upstream with no batch endpoint: each distinct key costs one call, made
 * with bounded concurrency, and one failing key rejects only its own load.
 */
export function createPerKeyLoader<K, V, C = K>(fetchOne: (key: K) => Promise<V>, { concurrency = 32, cacheKeyFn }: PerKeyLoaderOptions<K, C> = {}): DataLoader<K, V, C> {
  return new DataLoader<K, V, C>(
    async (keys) => {
      const results: (V | Error)[] = new Array(keys.length);
      let next = 0;
      const worker = async () => {
        while (next < keys.length) {
          const index = next++;
          try {
            results[index] = await fetchOne(keys[index]!);
          } catch (error) {
            results[index] = error instanceof Error ? error : new Error(String(error));
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, keys.length) }, worker));
      return results;
    },
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
