import { pino, type Logger } from 'pino';

/** At most one line this often, however many are dropped: a caller repeating the request cannot flood the log. */
const NOTE_EVERY_MS = 60_000;

/** An error graphql-js located at a field while executing: it has a response path. */
function isFieldError(reason: unknown): reason is Error & { path: readonly (string | number)[] } {
  return reason instanceof Error && reason.name === 'GraphQLError' && Array.isArray((reason as { path?: unknown }).path);
}

/**
 * graphql-js 16 completes a list with `Array.from`: when an item of a non-null type fails at once
 * after an earlier item's promise, the list fails there and that promise is never awaited. Should
 * it reject, it rejects unhandled, and Node 20 ends the process: one request whose list holds an
 * item still waiting on a call that then fails, and an item that fails at once (a field the
 * service left out), would end a subgraph for every caller. graphql-js 17 awaits them; 16 already
 * does for an object's fields. Subgraphs run mutations (and a query graphql-jit will not compile)
 * on graphql-js; compiled queries await every item. The request was answered
 * already, with the error that failed the list, so a field error is dropped here, with a line on
 * stderr at most once a minute. Any other unhandled rejection still ends the process, as Node's
 * default does: it is a bug of ours, and the process's state cannot be trusted after it.
 */
export function dropAbandonedFieldErrors(): void {
  let logger: Logger | undefined;
  let dropped = 0;
  let notedAt = Number.NEGATIVE_INFINITY;
  process.on('unhandledRejection', (reason) => {
    if (!isFieldError(reason)) throw reason;
    dropped += 1;
    const now = Date.now();
    if (now - notedAt < NOTE_EVERY_MS) return;
    notedAt = now;
    logger ??= pino({ name: 'graphql-execution' }, pino.destination({ dest: 2, sync: true }));
    // The path only: a field error's message may quote what the service answered.
    logger.warn({ dropped, lastPath: reason.path.join('.') }, 'field errors graphql-js had stopped awaiting were dropped (a list of non-null items failed while an item was still waiting)');
    dropped = 0;
  });
}
