import type { BreakerGuard } from '../lib/circuitBreakerGuards.ts';

/** How one subgraph request ended, told to that subgraph's circuit breaker. */
export interface SubgraphCallOutcome {
  /** The subgraph answered: a 5xx is a failure, anything else (a GraphQL error included) shows it up. */
  answered(status: number): void;
  /** No answer (refused, reset, timed out); not a failure when the caller's own signal cut it off. */
  unreachable(signal: { readonly aborted: boolean } | undefined): void;
}

const UNGUARDED: SubgraphCallOutcome = { answered() {}, unreachable() {} };

/**
 * Asks the subgraph's breaker to let a request through; throws UPSTREAM_UNAVAILABLE at once while
 * it is open. A subgraph that answers with errors because its own upstream is down is still up:
 * that upstream has a breaker of its own, in the subgraph.
 */
export function admitSubgraphCall(guard: BreakerGuard | undefined): SubgraphCallOutcome {
  if (!guard) return UNGUARDED;
  const permit = guard.admit();
  // Methods, not arrow functions in properties: tsx renames each of those at every call.
  return {
    answered(status) {
      if (status >= 500) permit.failed();
      else permit.succeeded();
    },
    unreachable(signal) {
      if (signal?.aborted) permit.abandoned();
      else permit.failed();
    },
  };
}
