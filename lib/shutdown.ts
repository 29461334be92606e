import type { ServerResponse } from 'node:http';
import { readInt, type Env } from './config.ts';
import type { Logger } from './logger.ts';
import { stopTracing } from './tracing.ts';

/**
 * Stops a process gracefully on SIGTERM or SIGINT and exits 0 once `stop` is done (1 if it fails),
 * after the spans still queued are sent; a second signal exits at once, for an operator who will not wait.
 */
export function exitOnSignal(stop: () => Promise<unknown>, logger: Logger): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'stopping');
    stop().then(
      () => stopTracing().finally(() => process.exit(0)),
      (error: unknown) => {
        logger.error({ err: error instanceof Error ? error.message : String(error) }, 'stopping failed');
        void stopTracing().finally(() => process.exit(1));
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** How a server stops on SIGTERM: told unready for `delayMs`, then `graceMs` for requests in flight. */
export interface DrainSettings {
  /** How long the process stays up, unready, before it refuses new connections. */
  delayMs: number;
  /** Then how long requests in flight get to finish before the rest are cut. */
  graceMs: number;
}

/** A subgraph's drain on SIGTERM (`SUBGRAPH_DRAIN_DELAY_MS`, `SUBGRAPH_SHUTDOWN_GRACE_MS`). */
export function readSubgraphDrain(env: Env): DrainSettings {
  return {
    delayMs: readInt(env, 'SUBGRAPH_DRAIN_DELAY_MS', 5000, { min: 0, max: 120_000 }),
    graceMs: readInt(env, 'SUBGRAPH_SHUTDOWN_GRACE_MS', 25_000, { min: 0, max: 600_000 }),
  };
}

/** Requests a server is answering, so a graceful stop can wait for them, for a bounded time. */
export function createInFlightRequests() {
  let count = 0;
  const whenIdle = new Set<() => void>();
  return {
    track(res: ServerResponse): void {
      count += 1;
      res.once('close', () => {
        count -= 1;
        if (count === 0) for (const resolve of [...whenIdle]) resolve();
      });
    },
    count: () => count,
    /** Resolves once none is left or `graceMs` has passed, with how many are still unfinished. */
    async settled(graceMs: number): Promise<number> {
      if (count > 0) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            whenIdle.delete(done);
            resolve();
          };
          const timer = setTimeout(done, graceMs);
          whenIdle.add(done);
        });
      }
      return count;
    },
  };
}
