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
