import { Departure, onCancel } from '../lib/http.ts';
import type { Cancellation } from './fetcher.ts';

/**
 * What makes two subgraph reads identical: the serialised request (operation, variables, name) and
 * every header sent but the call budget. The credential is among the headers, so two callers with
 * different credentials never share an answer.
 */
export function readKey(body: string, headers: Record<string, string>): string {
  return `${body}\u0000${JSON.stringify(headers)}`;
}

/**
 * Identical reads in flight at the same moment, made once: a caller that asks what another is
 * already asking joins it and gets the same answer. The shared call is cut off only once every
 * caller waiting on it has gone away; one caller leaving ends only its own wait.
 */
export function createInFlight<T>() {
  const pending = new Map<string, { promise: Promise<T>; waiters: number; departure: Departure }>();
  return {
    /** Joins the call in flight under `key`, or starts it; `shared` says whether it was joined. */
    run(key: string, cancellation: Cancellation | undefined, start: (departure: Departure) => Promise<T>): { promise: Promise<T>; shared: boolean } {
      let entry = pending.get(key);
      const shared = entry !== undefined;
      if (!entry) {
        // The shared call's own departure, told once its last caller has gone.
        const departure = new Departure();
        const created = { promise: start(departure), waiters: 0, departure };
        const forget = () => {
          if (pending.get(key) === created) pending.delete(key);
        };
        created.promise.then(forget, forget);
        pending.set(key, created);
        entry = created;
      }
      const joined = entry;
      joined.waiters += 1;
      if (!cancellation) return { promise: joined.promise, shared };
      const promise = new Promise<T>((resolve, reject) => {
        let settled = false;
        const unlisten = onCancel(cancellation, () => {
          if (settled) return;
          settled = true;
          joined.waiters -= 1;
          if (joined.waiters === 0) joined.departure.leave(cancellation.reason);
          reject(cancellation.reason as Error);
        });
        joined.promise.then(
          (value) => {
            unlisten();
            if (settled) return;
            settled = true;
            resolve(value);
          },
          (error: unknown) => {
            unlisten();
            if (settled) return;
            settled = true;
            reject(error as Error);
          },
        );
      });
      return { promise, shared };
    },
    get size() {
      return pending.size;
    },
  };
}
