import type { GraphQLError } from 'graphql';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from './logger.ts';
import { ErrorCode, graphError } from './errors.ts';
import { BREAKER_STATE_VALUE, createCircuitBreaker, isRefusal, type BreakerChange, type BreakerPermit, type CircuitBreaker, type CircuitBreakerSettings } from './circuitBreaker.ts';

/** A breaker as its callers use it: a permit, or a typed fast failure, counted and logged. */
export interface BreakerGuard {
  readonly breaker: CircuitBreaker;
  /** A permit to make the call; throws UPSTREAM_UNAVAILABLE with `retryAfterSeconds`, without calling, while the breaker refuses. */
  admit(): BreakerPermit;
}

export interface BreakerGuardsOptions {
  settings: CircuitBreakerSettings;
  logger: Logger;
  /** The process's metrics registry, where the breakers' state and refusals are published. */
  registry: Registry;
  /** The process's metric prefix (`gateway`, or the subgraph's service). */
  prefix: string;
  /** What the breaker stands in front of, for messages: `recognition`, `the recognition subgraph`. */
  describe?: (service: string) => string;
}

const MESSAGES: Record<BreakerChange['to'], string> = {
  open: 'circuit breaker open: calls fail fast for the cool-down',
  halfOpen: 'circuit breaker half-open: one probe call goes through',
  closed: 'circuit breaker closed: calls go through again',
};

/**
 * Breakers for the services one process calls, each created on first use, with their state on
 * the registry (`<prefix>_circuit_breaker_state{service}`: 0 closed, 1 open, 2 half-open), the
 * calls they refused (`<prefix>_circuit_breaker_rejected_total{service}`) and a warning per state
 * change naming the service (never a URL). Undefined for every service when breakers are off.
 */
export function createBreakerGuards({ settings, logger, registry, prefix, describe = (service) => service }: BreakerGuardsOptions): (service: string) => BreakerGuard | undefined {
  if (settings.failures === 0) return () => undefined;
  const guards = new Map<string, BreakerGuard>();
  new Gauge({
    name: `${prefix}_circuit_breaker_state`,
    help: 'Circuit breaker state per service: 0 closed, 1 open (calls fail fast), 2 half-open (one probe goes through)',
    labelNames: ['service'] as const,
    registers: [registry],
    collect() {
      for (const [service, guard] of guards) this.set({ service }, BREAKER_STATE_VALUE[guard.breaker.state()]);
    },
  });
  const rejected = new Counter({
    name: `${prefix}_circuit_breaker_rejected_total`,
    help: 'Calls failed fast with UPSTREAM_UNAVAILABLE by an open (or probing) circuit breaker, without reaching the service',
    labelNames: ['service'] as const,
    registers: [registry],
  });
  const onChange = (change: BreakerChange) => {
    const { service, from, to, cooldownMs } = change;
    logger.warn({ service, from, to, ...(to === 'open' ? { cooldownMs, ...(from === 'closed' ? { failures: change.failures } : {}) } : {}) }, MESSAGES[to]);
  };

  return (service) => {
    let guard = guards.get(service);
    if (!guard) {
      const breaker = createCircuitBreaker({ service, ...settings, onChange });
      const refused = rejected.labels({ service });
      const subject = describe(service);
      guard = {
        breaker,
        admit() {
          const entry = breaker.enter();
          if (!isRefusal(entry)) return entry;
          refused.inc();
          throw breakerOpenError(service, subject, entry.retryAfterMs);
        },
      };
      guards.set(service, guard);
      // Published from the start: a dashboard sees `0` rather than nothing before the first failure.
      refused.inc(0);
    }
    return guard;
  };
}

/** The fast failure of a call a breaker refused; a probe in flight elsewhere is worth a second's wait. */
export function breakerOpenError(service: string, subject: string, retryAfterMs: number): GraphQLError {
  const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return graphError(`${subject} is unavailable: its circuit breaker is open after repeated failures, so it was not called; retry in ${retryAfterSeconds} s`, {
    code: ErrorCode.UpstreamUnavailable,
    service,
    retryAfterSeconds,
  });
}
