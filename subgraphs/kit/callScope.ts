import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLError } from 'graphql';
import { ErrorCode, graphError } from './errors.ts';
import { CALL_BUDGET_HEADER, CALLS_MADE_HEADER } from '../../lib/callBudget.ts';
import type { RestTransport } from './transport.ts';
import type { Cancellation } from './loaders.ts';

// The headers are a contract between the gateway and the subgraphs, kept in lib/.
export { CALL_BUDGET_HEADER, CALLS_MADE_HEADER } from '../../lib/callBudget.ts';

/**
 * What one GraphQL request may still cost upstream. Every attempt of every upstream call takes
 * one call from it, retries included; a call past the budget, or after the caller went away, is
 * refused before anything is sent.
 */
export interface CallScope {
  /** Whether the request is cancelled (the caller has gone away): queued calls are not made, calls in flight are cut off. */
  readonly aborted: boolean;
  /** Aborted once the request is cancelled. Made when first asked for: reading `aborted` is enough for most. */
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

/**
 * A scope with a budget, cancelled by whoever holds it through `cancel`. The abort signal, an
 * AbortController with an event listener, cost a few microseconds on every request while almost
 * none is ever cancelled: it is made only for a caller that asks for it. A class: an object
 * literal of getters and methods made a closure for each of them, for every request.
 */
class CancellableScope implements CallScope {
  private made = 0;
  private reason: Error | undefined;
  private controller: AbortController | undefined;
  private readonly watchers = new Set<(reason: Error) => void>();

  constructor(
    readonly budget: number,
    private readonly given?: AbortSignal,
  ) {}

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  get signal(): AbortSignal {
    if (this.given) return this.given;
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  get calls(): number {
    return this.made;
  }

  take(service: string): void {
    if (this.reason) throw cancelledCall(service);
    if (this.made >= this.budget) {
      throw graphError(`${service} was not called: this request has made its ${this.budget} upstream calls`, { code: ErrorCode.OperationTooExpensive, service, budget: this.budget });
    }
    this.made += 1;
  }

  watch(cancel: (reason: Error) => void): () => void {
    if (this.reason) {
      cancel(this.reason);
      return () => {};
    }
    const watchers = this.watchers;
    watchers.add(cancel);
    return () => watchers.delete(cancel);
  }

  cancel(why: Error): void {
    if (this.reason) return;
    this.reason = why;
    this.controller?.abort(why);
    for (const cancel of this.watchers) cancel(why);
    this.watchers.clear();
  }
}

export function createCallScope({ budget, signal }: { budget: number; signal: AbortSignal }): CallScope {
  const scope = new CancellableScope(budget, signal);
  if (signal.aborted) scope.cancel(signal.reason as Error);
  else signal.addEventListener('abort', () => scope.cancel(signal.reason as Error), { once: true });
  return scope;
}

/**
 * The scopes of the reads in one batch (lib/readBatch.ts), a budget each: all cancelled when the
 * connection closes before the batch's answer is over (the gateway cuts a batch off only once
 * every caller waiting on it has gone).
 */
export function createBatchScopes(res: ServerResponse, budgets: readonly number[]): CallScope[] {
  const scopes = budgets.map((budget) => new CancellableScope(budget));
  res.once('close', () => {
    if (res.writableFinished) return;
    const why = new DOMException('the client went away', 'AbortError');
    for (const scope of scopes) scope.cancel(why);
  });
  return scopes;
}

/** The budget of one request: the subgraph's own cap, lowered (never raised) by the gateway's header. */
export function budgetOf(header: string | string[] | undefined, cap: number): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^[0-9]{1,15}$/.test(value.trim())) return cap;
  return Math.min(cap, Number(value));
}

/** What a request's scope keeps on its response, read by the two functions below. */
type ScopedResponse = ServerResponse & {
  [SCOPE]: CancellableScope;
  [WRITE_HEAD]: (...args: unknown[]) => ServerResponse;
};
const SCOPE = Symbol('call scope');
const WRITE_HEAD = Symbol('writeHead before the scope');

// Shared by every response, each reading its own scope: a bound writeHead and two closures made for
// every request were a cost on all of them.
function writeHeadWithCalls(this: ScopedResponse, ...args: unknown[]): ServerResponse {
  if (!this.headersSent) this.setHeader(CALLS_MADE_HEADER, String(this[SCOPE].calls));
  return this[WRITE_HEAD].apply(this, args);
}

function cancelIfUnfinished(this: ScopedResponse): void {
  if (!this.writableFinished) this[SCOPE].cancel(new DOMException('the client went away', 'AbortError'));
}

/**
 * The scope of one HTTP request to a subgraph: cancelled when the connection closes before the
 * answer is written (the gateway gave up, timed out or its client went away), and reporting the
 * calls it made in a response header, set as the headers are written.
 */
export function createRequestScope(req: IncomingMessage, res: ServerResponse, cap: number): CallScope {
  const scope = new CancellableScope(budgetOf(req.headers[CALL_BUDGET_HEADER], cap));
  const scoped = res as ScopedResponse;
  scoped[SCOPE] = scope;
  // As `ClientDeparture` (lib/http.ts) tells it, without an AbortController per request. `on`, not `once`: a response
  // closes once, and `once` wraps the listener in a function of its own.
  scoped.on('close', cancelIfUnfinished);
  // Node writes implicit headers through writeHead too, so this sees every answer.
  scoped[WRITE_HEAD] = res.writeHead as (...args: unknown[]) => ServerResponse;
  res.writeHead = writeHeadWithCalls as ServerResponse['writeHead'];
  return scope;
}

/** A transport whose every call belongs to one request's scope. */
export function scopedTransport(transport: RestTransport, scope: CallScope | undefined): RestTransport {
  if (!scope) return transport;
  // Methods, not arrow functions in properties: tsx, which keeps function names, renames each of
  // those with a property definition every time this runs, once per request.
  return {
    service: transport.service,
    // A client that builds its calls with the scope already on them spares a copy of each.
    request(call) {
      return transport.request(call.scope === scope ? call : { ...call, scope });
    },
    lookup(call) {
      return transport.lookup(call.scope === scope ? call : { ...call, scope });
    },
    stream(call) {
      return transport.stream(call.scope === scope ? call : { ...call, scope });
    },
    close() {
      return transport.close();
    },
  };
}

/** Loader options that stop a request's queued keys once it is cancelled (see `createPerKeyLoader`): the scope tells `aborted` as a signal does. */
export function cancelledWith(scope: CallScope | undefined, service: string): { signal?: Cancellation; cancelled?: () => Error } {
  return scope
    ? {
        signal: scope,
        cancelled() {
          return cancelledCall(service);
        },
      }
    : {};
}
