import type { ApolloServerPlugin } from '@apollo/server';
import { plainInfoLines, writeTogether, type Logger } from '../lib/logger.ts';
import type { GatewayContext } from './context.ts';
import { callerKey } from './rateLimit.ts';

const MAX_NAME = 100;

/** One operation as the access log records it: never a credential, a variable's value or the text. */
export interface AccessEntry {
  type: string;
  /** The operation's name as the client wrote it (names are the client's own words, not data). */
  operation?: string | undefined;
  /** SHA-256 of the operation's text, as Apollo's persisted queries name it. */
  documentHash?: string | undefined;
  durationMs: number;
  status: number;
  errorCodes: readonly string[];
  /** The path that served it: Apollo Server, or the pass-through. */
  path: 'apollo' | 'pass-through';
}

/**
 * One structured line per operation (`msg: "operation"`), with the upstream calls it cost and a
 * hash standing for its caller, so an operator can follow one client without seeing its credential.
 *
 * The line is built here, field by field, from the entry's typed fields (nothing else the caller's
 * object may carry gets in), so it holds no credential by construction. That is why its logger
 * does without pino's redaction: the logger's wildcard paths (`*.headers[...]`) made pino run its
 * redacting serialiser on every field of every line, a tenth of the gateway's CPU on a repeat
 * operation.
 */
export function createAccessLog(logger: Logger, enabled: boolean) {
  const lines = logger.child({}, { redact: [] });
  const write = plainInfoLines(lines, 'operation');
  // The lines of one turn of the event loop are written together at its end, in order: the
  // logger's code then runs once per batch, not between two requests' work. Measured in pairs at
  // concurrency 32, that took 4-13 µs of CPU off each operation of the gateway.
  let pending: object[] = [];
  const writePending = () => {
    const batch = pending;
    pending = [];
    writeTogether(lines, () => {
      for (const line of batch) write(line);
    });
  };
  return {
    record(context: Pick<GatewayContext, 'headers' | 'principal' | 'calls' | 'connection'>, entry: AccessEntry): void {
      if (!enabled || !lines.isLevelEnabled('info')) return;
      if (pending.length === 0) setImmediate(writePending);
      // Every field is read now: the line keeps no reference to the request (nor its credential).
      pending.push({
        type: entry.type,
        // A name is the client's to choose and as long as the body allows: the log keeps its start.
        operation: entry.operation && entry.operation.length > MAX_NAME ? `${entry.operation.slice(0, MAX_NAME)}…` : entry.operation,
        documentHash: entry.documentHash,
        durationMs: Math.round(entry.durationMs * 100) / 100,
        status: entry.status,
        errorCodes: entry.errorCodes,
        path: entry.path,
        upstreamCalls: context.calls?.spent,
        caller: callerKey(context.headers, context.principal, context.connection)?.slice(0, 24),
      });
    },
  };
}

export type AccessLog = ReturnType<typeof createAccessLog>;

/** The operations Apollo Server runs, in the access log. */
export function accessLogPlugin(log: AccessLog): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      const started = performance.now();
      return {
        async willSendResponse({ operation, operationName, queryHash, errors, response, contextValue }) {
          log.record(contextValue, {
            type: operation?.operation ?? 'unknown',
            operation: operationName ?? undefined,
            documentHash: queryHash,
            durationMs: performance.now() - started,
            status: response.http.status ?? 200,
            errorCodes: [...new Set((errors ?? []).map((error) => String(error.extensions?.code ?? 'INTERNAL_SERVER_ERROR')))],
            path: 'apollo',
          });
        },
      };
    },
  };
}
