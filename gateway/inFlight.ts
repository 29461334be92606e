import { Departure, onCancel } from '../lib/http.ts';
import type { Cancellation } from './fetcher.ts';
import { createWriteFence, type FencedRead, type WriteFence } from './writeFence.ts';

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
 *
 * A call that `fence` says a mutation by its credential overtook is joined no more: a later caller
 * starts a call of its own, and the overtaken one still answers those already waiting on it.
 */
export function createInFlight<T>(fence: WriteFence = createWriteFence()) {
  const pending = new Map<string, { promise: Promise<T>; waiters: number; departure: Departure; read: FencedRead }>();
  return {
    /**
     * Joins the call in flight under `key`, or starts it; `shared` says whether it was joined.
     * `credential` is the caller's credential as `fence` knows it; `start` gets the call's place in
     * the fence, to learn once answered whether a mutation overtook it (then its answer is not kept).
     */
    run(key: string, cancellation: Cancellation | undefined, start: (departure: Departure, read: FencedRead) => Promise<T>, credential = ''): { promise: Promise<T>; shared: boolean } {
      let entry = pending.get(key);
      // Checked when joining, so a mutation marks the credential's calls and never scans the map.
      if (entry?.read.overtaken) entry = undefined;
      const shared = entry !== undefined;
      if (!entry) {
        // The shared call's own departure, told once its last caller has gone.
        const departure = new Departure();
        const read = fence.begin(credential);
        let started: Promise<T>;
        try {
          started = start(departure, read);
        } catch (error) {
          read.end();
          throw error;
        }
        const created = { promise: started, waiters: 0, departure, read };
        const forget = () => {
          read.end();
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
