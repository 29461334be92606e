/** What one timed stretch of load produced; several are pooled into a `Summary`. */
export interface LoadSample {
  latenciesMs: number[];
  elapsedMs: number;
  errors: number;
  /** The first failure's message, to say what broke. */
  firstError?: string;
}

export interface LoadOptions {
  /** Operations in flight at once: a closed loop, each worker starts its next when its last ends. */
  concurrency: number;
  durationMs: number;
}

/**
 * Closed-loop load: `concurrency` workers call `operation` back to back until the duration is up.
 * Throughput is completions over the time until the last worker finished, so an operation that
 * straddles the deadline is counted with the time it took.
 */
export async function runLoad(operation: () => Promise<unknown>, { concurrency, durationMs }: LoadOptions): Promise<LoadSample> {
  const latenciesMs: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      const begun = performance.now();
      try {
        await operation();
        latenciesMs.push(performance.now() - begun);
      } catch (error) {
        errors += 1;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latenciesMs, elapsedMs: performance.now() - started, errors, ...(firstError ? { firstError } : {}) };
}
