import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLError } from 'graphql';
import { clientGone } from '../../lib/http.ts';
import { ErrorCode, graphError } from './errors.ts';
import { CALL_BUDGET_HEADER, CALLS_MADE_HEADER } from '../../lib/callBudget.ts';
import type { RestTransport } from './transport.ts';

// The headers are a contract between the gateway and the subgraphs, kept in lib/.
export { CALL_BUDGET_HEADER, CALLS_MADE_HEADER } from '../../lib/callBudget.ts';

/**
 * What one GraphQL request may still cost upstream. Every attempt of every upstream call takes
 * one call from it, retries included; a call past the budget, or after the caller went away, is
 * refused before anything is sent.
 */
export interface CallScope {
  /** Aborted when the caller has gone away: queued calls are not made, calls in flight are cut off. */
  readonly signal: AbortSignal;
  readonly budget: number;
  /** Calls made so far. */
  readonly calls: number;
  /** Counts one upstream call; throws OPERATION_TOO_EXPENSIVE past the budget, UPSTREAM_UNAVAILABLE once cancelled. */
  take(service: string): void;
  /**
   * Calls `cancel` when the request is cancelled (at once if it already is); returns the way to
   * stop watching. A plain set, like the deadline batches: an abort listener per call was a cost
   * on every call of a burst.
   */
  watch(cancel: (reason: Error) => void): () => void;
}

/** The error of a call that the caller's departure or deadline cancelled before it was made. */
export function cancelledCall(service: string): GraphQLError {
  return graphError(`${service} was not called: the request was cancelled`, { code: ErrorCode.UpstreamUnavailable, service });
}

export function createCallScope({ budget, signal }: { budget: number; signal: AbortSignal }): CallScope {
  let calls = 0;
  const watchers = new Set<(reason: Error) => void>();
  signal.addEventListener(
    'abort',
    () => {
      for (const cancel of watchers) cancel(signal.reason as Error);
      watchers.clear();
    },
    { once: true },
  );
  return {
    signal,
    budget,
    get calls() {
      return calls;
    },
    take(service) {
      if (signal.aborted) throw cancelledCall(service);
      if (calls >= budget) {
        throw graphError(`${service} was not called: this request has made its ${budget} upstream calls`, { code: ErrorCode.OperationTooExpensive, service, budget });
      }
      calls += 1;
    },
    watch(cancel) {
      if (signal.aborted) {
        cancel(signal.reason as Error);
        return () => {};
      }
      watchers.add(cancel);
      return () => watchers.delete(cancel);
    },
  };
}

/** The budget of one request: the subgraph's own cap, lowered (never raised) by the gateway's header. */
export function budgetOf(header: string | string[] | undefined, cap: number): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^[0-9]{1,15}$/.test(value.trim())) return cap;
  return Math.min(cap, Number(value));
}

/**
 * The scope of one HTTP request to a subgraph: cancelled when the connection closes before the
 * answer is written (the gateway gave up, timed out or its client went away), and reporting the
 * calls it made in a response header, set as the headers are written.
 */
export function createRequestScope(req: IncomingMessage, res: ServerResponse, cap: number): CallScope {
  const scope = createCallScope({ budget: budgetOf(req.headers[CALL_BUDGET_HEADER], cap), signal: clientGone(res) });
  // Node writes implicit headers through writeHead too, so this sees every answer.
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((...args: unknown[]) => {
    if (!res.headersSent) res.setHeader(CALLS_MADE_HEADER, String(scope.calls));
    return writeHead(...args);
  }) as ServerResponse['writeHead'];
  return scope;
}

/** A transport whose every call belongs to one request's scope. */
export function scopedTransport(transport: RestTransport, scope: CallScope | undefined): RestTransport {
  if (!scope) return transport;
  return {
    service: transport.service,
    request: (call) => transport.request({ ...call, scope }),
    lookup: (call) => transport.lookup({ ...call, scope }),
    stream: (call) => transport.stream({ ...call, scope }),
    close: () => transport.close(),
  };
}

/** Loader options that stop a request's queued keys once it is cancelled (see `createPerKeyLoader`). */
export function cancelledWith(scope: CallScope | undefined, service: string): { signal?: AbortSignal; cancelled?: () => Error } {
  return scope ? { signal: scope.signal, cancelled: () => cancelledCall(service) } : {};
}
