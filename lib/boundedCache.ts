/**
 * A map that forgets its oldest entry once it holds `capacity` entries. Caches keyed by what
 * clients send (operation text) must stay bounded however many distinct operations arrive.
 */
export interface BoundedCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  readonly size: number;
  /** The bytes held, as `sizeOf` counts them; 0 when the cache counts entries only. */
  readonly bytes: number;
}

/** A second bound, for caches whose values are as large as clients make them: the bytes held. */
export interface ByteBound<V> {
  maxBytes: number;
  /** The bytes an entry holds (its key included, when the key is as large as the value). */
  sizeOf(key: string, value: V): number;
}

export function createBoundedCache<V>(capacity: number, byteBound?: ByteBound<V>): BoundedCache<V> {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer; got ${capacity}`);
  const entries = new Map<string, V>();
  const sizes = byteBound ? new Map<string, number>() : undefined;
  let bytes = 0;
  const forget = (key: string) => {
    entries.delete(key);
    if (sizes) {
      bytes -= sizes.get(key) ?? 0;
      sizes.delete(key);
    }
  };
  return {
    get: (key) => entries.get(key),
    set(key, value) {
      if (!byteBound || !sizes) {
        if (!entries.has(key) && entries.size >= capacity) forget(entries.keys().next().value as string);
        entries.set(key, value);
        return;
      }
      const size = byteBound.sizeOf(key, value);
      // An entry larger than the whole cache would only empty it.
      if (size > byteBound.maxBytes) return;
      forget(key);
      while (entries.size > 0 && (entries.size >= capacity || bytes + size > byteBound.maxBytes)) forget(entries.keys().next().value as string);
      entries.set(key, value);
      sizes.set(key, size);
      bytes += size;
    },
    get size() {
      return entries.size;
    },
    get bytes() {
      return bytes;
    },
  };
}
