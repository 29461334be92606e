/**
 * The upstream call budget as it crosses from the gateway to a subgraph (docs/LIMITS.md, part 3):
 * written once here, read by both.
 */

/** Upstream calls the gateway allows one subgraph request (what is left of the operation's budget). */
export const CALL_BUDGET_HEADER = 'x-upstream-call-budget';
/** Upstream calls a subgraph request made, retries included: the gateway counts them against the operation's budget. */
export const CALLS_MADE_HEADER = 'x-upstream-calls';
