/**
 * A map that forgets its oldest entry once it holds `capacity` entries. Caches keyed by what
 * clients send (operation text) must stay bounded however many distinct operations arrive.
 */
export interface BoundedCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  readonly size: number;
}

export function createBoundedCache<V>(capacity: number): BoundedCache<V> {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer; got ${capacity}`);
  const entries = new Map<string, V>();
  return {
    get: (key) => entries.get(key),
    set(key, value) {
      if (!entries.has(key) && entries.size >= capacity) entries.delete(entries.keys().next().value as string);
      entries.set(key, value);
    },
    get size() {
      return entries.size;
    },
  };
}
