import { GraphQLError } from 'graphql';
import type { BreakerGuard } from '../../lib/circuitBreakerGuards.ts';
import type { BreakerPermit } from '../../lib/circuitBreaker.ts';
import { ErrorCode } from './errors.ts';
import { saysNothingOfService, type RestCall, type RestTransport } from './transport.ts';

/**
 * Whether a failed call counts against its service. What the transport reports is read after its
 * retries: no answer (refused, reset, cut off, timed out) and a 5xx it gave up on are failures;
 * any other answer, a 4xx or a 429 included, shows the service up. A call the request's
 * cancellation stopped, or its budget never let out, says nothing about the service; nor does one
 * the transport failed before the service had it for half its deadline: never sent (no connection
 * of its caller's share came free in time, its turn came too late), or sent too late for its
 * timeout to mean anything (`saysNothingOfService`). So a caller cannot open the breaker for
 * everyone by queueing more calls than the connections can carry.
 */
function settleOnError(permit: BreakerPermit, call: RestCall, error: unknown): void {
  if (call.scope?.aborted || !(error instanceof GraphQLError) || saysNothingOfService(error)) return permit.abandoned();
  const { code, status } = error.extensions;
  if (code === ErrorCode.UpstreamUnavailable || (code === ErrorCode.UpstreamError && typeof status === 'number' && status >= 500)) return permit.failed();
  if (typeof status === 'number') return permit.succeeded();
  // Refused before anything was sent (OPERATION_TOO_EXPENSIVE), or an answer too large to read.
  return permit.abandoned();
}

/** A 5xx the call takes as an answer (`answers`) is still the service failing. */
const settleOnAnswer = (permit: BreakerPermit, status: number | undefined) => (status !== undefined && status >= 500 ? permit.failed() : permit.succeeded());

async function guarded<T extends { status: number } | null>(guard: BreakerGuard, call: RestCall, send: (call: RestCall) => Promise<T>): Promise<T> {
  // An open breaker fails here: no budget taken, nothing sent.
  const permit = guard.admit();
  try {
    const answer = await send(call);
    settleOnAnswer(permit, answer?.status);
    return answer;
  } catch (error) {
    settleOnError(permit, call, error);
    throw error;
  }
}

/**
 * The transport behind its service's circuit breaker: while the service keeps failing, calls fail
 * fast with UPSTREAM_UNAVAILABLE instead of each waiting out the deadline and retries; after the
 * cool-down one call probes it. Without a guard (breakers off) the transport itself.
 */
export function withCircuitBreaker(transport: RestTransport, guard: BreakerGuard | undefined): RestTransport {
  if (!guard) return transport;
  return {
    service: transport.service,
    request: (call) => guarded(guard, call, (sent) => transport.request(sent)),
    lookup: (call) => guarded(guard, call, (sent) => transport.lookup(sent)),
    stream: (call) => guarded(guard, call, (sent) => transport.stream(sent)),
    close: () => transport.close(),
  };
}
