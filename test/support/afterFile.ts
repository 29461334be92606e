import { afterAll } from 'vitest';

const pending: (() => Promise<void>)[] = [];

/**
 * Closes what a helper started once the file's tests are done. An `afterAll` runs only when it is
 * registered while vitest collects the file: one registered by a test or a hook is dropped without a
 * word, and in a worker shared between files (the e2e project's `isolate: false`) what it was to close
 * would stay open for every later file. So the close is also queued for `closeLeftovers` (a setup
 * file's `afterAll`); whichever comes first closes, once.
 */
export function closeAfterFile(close: () => unknown): void {
  let closing: Promise<void> | undefined;
  const once = () =>
    (closing ??= (async () => {
      await close();
    })());
  afterAll(once);
  pending.push(once);
}

/** Closes, last started first, whatever was given to `closeAfterFile` in this file and is still open. */
export async function closeLeftovers(): Promise<void> {
  for (const close of pending.splice(0).reverse()) await close();
}
