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
  const pending = new Map<string, { promise: Promise<T>; waiters: number; controller: AbortController }>();
  return {
    /** Joins the call in flight under `key`, or starts it; `shared` says whether it was joined. */
    run(key: string, signal: AbortSignal | undefined, start: (signal: AbortSignal) => Promise<T>): { promise: Promise<T>; shared: boolean } {
      let entry = pending.get(key);
      const shared = entry !== undefined;
      if (!entry) {
        const controller = new AbortController();
        const created = { promise: start(controller.signal), waiters: 0, controller };
        const forget = () => {
          if (pending.get(key) === created) pending.delete(key);
        };
        created.promise.then(forget, forget);
        pending.set(key, created);
        entry = created;
      }
      const joined = entry;
      joined.waiters += 1;
      if (!signal) return { promise: joined.promise, shared };
      if (signal.aborted) {
        joined.waiters -= 1;
        if (joined.waiters === 0) joined.controller.abort(signal.reason);
        return { promise: Promise.reject(signal.reason as Error), shared };
      }
      const promise = new Promise<T>((resolve, reject) => {
        const leave = () => {
          joined.waiters -= 1;
          if (joined.waiters === 0) joined.controller.abort(signal.reason);
          reject(signal.reason as Error);
        };
        signal.addEventListener('abort', leave, { once: true });
        joined.promise.then(
          (value) => {
            signal.removeEventListener('abort', leave);
            resolve(value);
          },
          (error: unknown) => {
            signal.removeEventListener('abort', leave);
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
