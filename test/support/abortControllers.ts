import { vi } from 'vitest';

/** Counts the AbortControllers made from now on; the caller unstubs globals after its test. */
export function countAbortControllers(): () => number {
  let made = 0;
  const Real = globalThis.AbortController;
  vi.stubGlobal(
    'AbortController',
    class extends Real {
      constructor() {
        super();
        made += 1;
      }
    },
  );
  return () => made;
}
